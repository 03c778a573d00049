//! `claw-transcript context`: the messages the model receives for a transcript's active
//! branch (`transcript.md` §2): the rebuilt context, its LLM conversion, and the gateway's
//! replay normalisation for the model API that set the current model (or one given).

use serde::Serialize;
use serde_json::Value;

use crate::transcript::context::{self, ContextError, ReplayPolicy};
use crate::transcript::{build_context, convert_to_llm, estimate_context_tokens, SessionIndex};

/// Which stage of the context to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextStage {
    /// The agent messages, before the replay normalisation and the LLM conversion.
    Raw,
    /// The LLM conversion, without the replay normalisation.
    Converted,
    /// What the model receives: converted and normalised for replay.
    Replayed,
}

/// What `context` prints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextView {
    /// The messages at the chosen stage.
    pub messages: Vec<Value>,
    /// The thinking level (`off` by default).
    pub thinking_level: Value,
    /// `{provider, modelId}` of the last model change or assistant message.
    pub model: Option<Value>,
    /// The model API the replay is for.
    pub api: Option<String>,
    /// The active leaf.
    pub leaf_id: Option<String>,
    /// The gateway's estimate of the context's tokens.
    pub estimated_tokens: f64,
}

/// The context of `ix`'s active branch at `stage`, replayed for `api` (default: the API
/// of the assistant message that set the current model).
pub fn model_context(
    ix: &SessionIndex,
    stage: ContextStage,
    api: Option<String>,
    now_ms: i64,
) -> Result<ContextView, ContextError> {
    let branch = ix.branch(None);
    let c = build_context(&branch)?;
    let api = api.or_else(|| context::branch_model_api(&branch));
    let messages = match stage {
        ContextStage::Raw => c.messages.clone(),
        ContextStage::Converted => convert_to_llm(&c.messages),
        ContextStage::Replayed => {
            let model_id = c
                .model
                .as_ref()
                .and_then(|m| m.get("modelId"))
                .and_then(Value::as_str);
            let policy = ReplayPolicy::for_api(api.as_deref(), model_id);
            context::model_messages(&c.messages, policy, now_ms)
        }
    };
    let est = estimate_context_tokens(&c.messages);
    Ok(ContextView {
        messages,
        thinking_level: c.thinking_level,
        model: c.model,
        api,
        leaf_id: ix.leaf_id.clone(),
        estimated_tokens: est.tokens,
    })
}
