//! The repair pass's step 7 (synthetic results for unanswered tool calls) counted in one
//! streaming pass: what each `message` row shows of it ([`RepairView`], made by both of the
//! scan's row readers) and the tally over the rows ([`MissingResults`]).

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::js;

/// What the repair pass's step 7 (synthetic results for unanswered tool calls) reads of one
/// `message` row whose message is an object (load-normalised).
#[derive(Debug, Default, PartialEq)]
pub struct RepairView<'a> {
    /// An assistant delivery mirror (what makes a Responses assistant's calls count).
    mirror: bool,
    /// For tool results: the persisted result id (trimmed).
    result_id: Option<Cow<'a, str>>,
    /// An OpenAI code-mode assistant (first pass).
    first: bool,
    /// A Responses assistant (second pass).
    second: bool,
    /// For the candidates: (id, name) of the tool-call blocks.
    calls: Vec<(String, Option<String>)>,
}

impl<'a> RepairView<'a> {
    /// The view of a message with these fields; `calls` lists its `toolCall`/`toolUse`/
    /// `functionCall` blocks with non-empty string ids (only asked for candidates).
    pub fn new(
        role: &str,
        api: Option<&str>,
        provider: Option<&str>,
        model: Option<&str>,
        stop: Option<&str>,
        result_id: Option<Cow<'a, str>>,
        calls: impl FnOnce() -> Vec<(String, Option<String>)>,
    ) -> RepairView<'a> {
        fn t(v: Option<&str>) -> &str {
            v.map(js::trim).unwrap_or("")
        }
        let assistant = role == "assistant";
        let live = assistant && stop != Some("error") && stop != Some("aborted");
        let first = live && api == Some("openai-chatgpt-responses") && provider == Some("openai");
        let second = live
            && matches!(
                t(api),
                "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
            );
        RepairView {
            mirror: assistant
                && t(provider) == "openclaw"
                && matches!(t(model), "delivery-mirror" | "gateway-injected"),
            result_id: if role == "toolResult" {
                result_id
            } else {
                None
            },
            first,
            second,
            calls: if first || second { calls() } else { Vec::new() },
        }
    }

    /// The view of a message object (the general path).
    pub(crate) fn of(m: &'a Map<String, Value>) -> RepairView<'a> {
        let s = |k: &str| m.get(k).and_then(Value::as_str);
        RepairView::new(
            s("role").unwrap_or(""),
            s("api"),
            s("provider"),
            s("model"),
            s("stopReason"),
            crate::transcript::repair::result_id_in(m).map(Cow::Borrowed),
            || crate::transcript::repair::tool_calls_in(m),
        )
    }
}

/// The repair pass's step 7, counted in one streaming pass: what
/// [`missing_tool_result_count`](crate::transcript::repair::missing_tool_result_count) computes over every message row, keeping only the
/// persisted result ids and the candidate calls.
#[derive(Debug, Default)]
pub(crate) struct MissingResults {
    /// Tool-result ids persisted anywhere.
    results: HashSet<String>,
    /// Calls of OpenAI code-mode assistants (first pass), in file order.
    first: Vec<String>,
    /// `message` calls of a Responses assistant, waiting for the next message row.
    pending: Option<Vec<String>>,
    /// `message` calls of Responses assistants followed by a delivery mirror (second pass).
    second: Vec<String>,
}

impl MissingResults {
    /// The next message row.
    pub(crate) fn observe(&mut self, v: RepairView<'_>) {
        if let Some(calls) = self.pending.take() {
            if v.mirror {
                self.second.extend(calls);
            }
        }
        if let Some(id) = v.result_id {
            if !self.results.contains(&*id) {
                self.results.insert(id.into_owned());
            }
        }
        if v.first {
            self.first.extend(v.calls.iter().map(|(id, _)| id.clone()));
        }
        if v.second {
            self.pending = Some(
                v.calls
                    .into_iter()
                    .filter(|(_, name)| {
                        js::trim(name.as_deref().unwrap_or("")).to_lowercase() == "message"
                    })
                    .map(|(id, _)| id)
                    .collect(),
            );
        }
    }

    /// How many synthetic results the repair pass would insert.
    pub(crate) fn count(self) -> usize {
        let mut ids = self.results;
        let mut n = 0;
        for id in self.first.into_iter().chain(self.second) {
            if ids.insert(id) {
                n += 1;
            }
        }
        n
    }
}
