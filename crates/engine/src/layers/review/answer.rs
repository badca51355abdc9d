//! A reviewer's answer: the one verdict carrying the call's nonce, parsed
//! and checked, and its issues as report issues.

use super::*;
use crate::Error;

/// The reviewer's answer cannot be used, and why (`Error::Agent`): the
/// arguments of `format!`.
macro_rules! unusable {
    ($($why:tt)*) => {
        Error::Agent(format!($($why)*))
    };
}

/// Parse a reviewer's output; only verdict objects carrying `"nonce":
/// nonce` count (others, e.g. copied from the diff, are ignored). `Err` is
/// a structural failure, with why.
pub fn parse_review(bytes: &[u8], nonce: &str) -> Result<ReviewVerdict, Error> {
    if nonce.len() < 16 {
        return Err(unusable!("internal error: no review nonce"));
    }
    if bytes.len() > MAX_REVIEW_BYTES {
        return Err(unusable!(
            "the output is {} bytes, over the {} KiB limit for a review",
            bytes.len(),
            MAX_REVIEW_BYTES / 1024
        ));
    }
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Err(unusable!("the reviewer printed nothing"));
    }
    let objects = json_objects(&text);
    let nested = objects.iter().any(|o| {
        !o.contains_key("verdict") && Value::Object(o.clone()).to_string().contains("\"verdict\"")
    });
    let verdicts: Vec<&Map<String, Value>> = objects
        .iter()
        .filter(|o| o.contains_key("verdict"))
        .collect();
    let signed: Vec<&Map<String, Value>> = verdicts
        .iter()
        .copied()
        .filter(|o| o.get("nonce").and_then(Value::as_str) == Some(nonce))
        .collect();
    match signed.len() {
        0 if !verdicts.is_empty() => Err(unusable!(
            "{} verdict object{} without this review's nonce (ignored: a verdict copied from the diff or the prompt never counts); the verdict must carry `\"nonce\"`",
            verdicts.len(),
            if verdicts.len() == 1 { "" } else { "s" }
        )),
        0 if nested => Err(unusable!("the `verdict` key is nested inside another object; it must be in a top-level JSON object")),
        0 if text.contains("\"verdict\"") => {
            Err(unusable!("a verdict object starts but is not valid JSON (truncated or malformed)"))
        }
        0 => Err(unusable!(
            "no JSON verdict in the output (it begins: {:?})",
            rascal_core::text::ellipsis(text.trim(), 60)
        )),
        n if signed.iter().any(|o| *o != signed[0]) => Err(unusable!(
            "{n} verdict objects carrying the nonce disagree; exactly one verdict is allowed"
        )),
        _ => verdict_of(signed[0]),
    }
}

fn verdict_of(o: &Map<String, Value>) -> Result<ReviewVerdict, Error> {
    let decision = match o.get("verdict") {
        Some(Value::String(s)) if s == "approve" => Decision::Approve,
        Some(Value::String(s)) if s == "request_changes" => Decision::RequestChanges,
        Some(Value::String(s)) => {
            return Err(unusable!(
                "unknown verdict `{}`; expected `approve` or `request_changes`",
                rascal_core::text::ellipsis(s, 40)
            ))
        }
        Some(other) => return Err(unusable!("`verdict` must be a string, got {}", kind(other))),
        None => unreachable!("filtered on the key"),
    };
    let list = match o.get("issues") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(other) => return Err(unusable!("`issues` must be a list, got {}", kind(other))),
    };
    let mut issues = Vec::new();
    for (n, item) in list.iter().enumerate() {
        let n = n + 1;
        let Value::Object(i) = item else {
            return Err(unusable!("issue {n} must be an object, got {}", kind(item)));
        };
        let severity = match i.get("severity") {
            Some(Value::String(s)) => match s.as_str() {
                "critical" => ReviewSeverity::Critical,
                "major" => ReviewSeverity::Major,
                "minor" => ReviewSeverity::Minor,
                other => {
                    return Err(unusable!(
                        "issue {n}: unknown severity `{}`; expected critical, major or minor",
                        rascal_core::text::ellipsis(other, 40)
                    ))
                }
            },
            Some(v) => {
                return Err(unusable!(
                    "issue {n}: `severity` must be a string, got {}",
                    kind(v)
                ))
            }
            None => return Err(unusable!("issue {n}: `severity` is missing")),
        };
        let location = match i.get("location") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(unusable!(
                    "issue {n}: `location` must be a string, got {}",
                    kind(v)
                ))
            }
        };
        let description = match i.get("description") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | None => {
                return Err(unusable!("issue {n}: `description` is missing or empty"))
            }
            Some(v) => {
                return Err(unusable!(
                    "issue {n}: `description` must be a string, got {}",
                    kind(v)
                ))
            }
        };
        issues.push(ReviewIssue {
            severity,
            location,
            description,
        });
    }
    if decision == Decision::Approve
        && issues
            .iter()
            .any(|i| i.severity == ReviewSeverity::Critical)
    {
        return Err(unusable!(
            "`approve` with a critical issue contradicts itself"
        ));
    }
    if decision == Decision::RequestChanges && issues.is_empty() {
        return Err(unusable!(
            "`request_changes` without any issue gives the author nothing to fix"
        ));
    }
    Ok(ReviewVerdict { decision, issues })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `path:line` → (path, line); anything else is a path (or nothing).
pub(super) fn split_location(loc: &str) -> (Option<String>, Option<u32>) {
    let loc = loc.trim();
    if loc.is_empty() {
        return (None, None);
    }
    if let Some((p, l)) = loc.rsplit_once(':') {
        let l = l.split('-').next().unwrap_or(l);
        if let Ok(n) = l.trim().parse::<u32>() {
            return (Some(p.to_string()), Some(n));
        }
    }
    (Some(loc.to_string()), None)
}

/// The issues of a verdict as report issues. An approving reviewer's issues
/// are at most warnings: they inform, they do not block.
pub fn issues_of(reviewer: &str, v: &ReviewVerdict) -> Vec<Issue> {
    let rule = format!("review/{reviewer}");
    let mut out: Vec<Issue> = v
        .issues
        .iter()
        .map(|i| {
            let mut sev = i.severity.severity();
            if v.decision == Decision::Approve {
                sev = sev.min(Severity::Warning);
            }
            let mut issue = Issue::new(&rule, sev, i.description.clone());
            let (path, line) = split_location(&i.location);
            issue.path = path;
            issue.line = line;
            issue
        })
        .collect();
    if v.decision == Decision::RequestChanges && !out.iter().any(|i| i.severity >= Severity::Error)
    {
        out.push(Issue::new(
            &rule,
            Severity::Error,
            format!("`{reviewer}` requested changes (its issues are all minor)"),
        ));
    }
    out
}
