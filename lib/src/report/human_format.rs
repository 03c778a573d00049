//! Ages and token counts written for people, exactly as the gateway writes them
//! (`formatTimeAgo` of `infra/format-time/format-relative.ts`, `formatKTokens` of
//! `commands/sessions.ts`), so `list`, `cleanup` and the gateway's own tables say the same
//! `47h ago` and `12k` for the same entry.

use crate::js::duration::js_round;

/// `formatTimeAgo(ms)` with its suffix: `just now`, `5m ago`, `47h ago`, `2d ago`; a
/// negative, missing or non-finite duration is `unknown`.
pub fn format_time_ago(ms: f64) -> String {
    if !ms.is_finite() || ms < 0.0 {
        return "unknown".into();
    }
    let seconds = js_round(ms / 1000.0);
    let minutes = js_round(seconds / 60.0);
    if minutes < 1.0 {
        return "just now".into();
    }
    if minutes < 60.0 {
        return format!("{minutes}m ago");
    }
    let hours = js_round(minutes / 60.0);
    if hours < 48.0 {
        return format!("{hours}h ago");
    }
    format!("{}d ago", js_round(hours / 24.0))
}

/// `formatKTokens(n)` of the sessions table: thousands with one decimal below 10k, none
/// from 10k on (`1.3k`, `12k`, `200k`), rounded as JavaScript's `toFixed`.
pub fn format_k_tokens(tokens: f64) -> String {
    let digits = if tokens >= 10_000.0 { 0 } else { 1 };
    format!("{}k", to_fixed(tokens / 1000.0, digits))
}

/// The percentage of a context window a session fills, as the sessions table shows it
/// (`Math.min(999, Math.round(total / context * 100))`); `None` without a window.
pub fn context_percent(total: f64, context: f64) -> Option<f64> {
    (context > 0.0).then(|| js_round(total / context * 100.0).min(999.0))
}

/// `Number.prototype.toFixed(digits)`: the exact decimal value rounded half up at
/// `digits` places (Rust's `{:.N}` rounds a tie to even: `1.25` is `1.2` there, `1.3` here).
pub fn to_fixed(v: f64, digits: usize) -> String {
    if !v.is_finite() || v.abs() >= 1e21 {
        return ryu_js::Buffer::new().format(v).to_string();
    }
    // Far more digits than a tie needs: the double's exact expansion, cut well past it.
    let exact = format!("{:.*}", digits + 30, v.abs());
    let (int_part, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let kept = format!("{int_part}{}", &frac[..digits]);
    let round_up = frac.as_bytes().get(digits).is_some_and(|&d| d >= b'5');
    let Ok(mut n) = kept.parse::<u128>() else {
        return format!("{:.*}", digits, v);
    };
    if round_up {
        n += 1;
    }
    let s = format!("{n:0>width$}", width = digits + 1);
    let (i, f) = s.split_at(s.len() - digits);
    let sign = if v < 0.0 && n != 0 { "-" } else { "" };
    if digits == 0 {
        format!("{sign}{i}")
    } else {
        format!("{sign}{i}.{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ago_as_the_gateway() {
        assert_eq!(format_time_ago(10_000.0), "just now");
        assert_eq!(format_time_ago(90_000.0), "2m ago");
        assert_eq!(format_time_ago(3_600_000.0 * 5.0), "5h ago");
        assert_eq!(format_time_ago(3_600_000.0 * 47.0), "47h ago");
        assert_eq!(format_time_ago(86_400_000.0 * 40.0), "40d ago");
        assert_eq!(format_time_ago(-1.0), "unknown");
    }

    #[test]
    fn k_tokens_as_the_gateway() {
        assert_eq!(format_k_tokens(1250.0), "1.3k");
        assert_eq!(format_k_tokens(999.0), "1.0k");
        assert_eq!(format_k_tokens(12_345.0), "12k");
        assert_eq!(format_k_tokens(12_500.0), "13k");
        assert_eq!(format_k_tokens(200_000.0), "200k");
        assert_eq!(format_k_tokens(0.0), "0.0k");
        assert_eq!(context_percent(1.0, 200.0), Some(1.0));
        assert_eq!(context_percent(5.0, 1.0), Some(500.0));
        assert_eq!(context_percent(5000.0, 1.0), Some(999.0));
        assert_eq!(context_percent(1.0, 0.0), None);
    }

    #[test]
    fn to_fixed_rounds_ties_up() {
        assert_eq!(to_fixed(0.25, 1), "0.3");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(1.005, 2), "1.00"); // 1.00499999999999989…
        assert_eq!(to_fixed(-1.5, 0), "-2");
        assert_eq!(to_fixed(0.04, 1), "0.0");
    }
}
