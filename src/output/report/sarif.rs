//! SARIF 2.1.0: each issue of each candidate's reports as a result with its
//! rule id, level and physical location, so code-scanning tools can ingest
//! guardrail and permission findings. A check that could not run is a result
//! too (`<layer>/<check>/errored`, level error).

use crate::model::summary::RunSummary;
use crate::model::verdict::{Severity, Status};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Info => "note",
        Severity::Warning => "warning",
        Severity::Error | Severity::Critical => "error",
    }
}

pub fn sarif(s: &RunSummary) -> Value {
    let mut rules: BTreeMap<String, String> = BTreeMap::new();
    let mut results = Vec::new();
    let candidates: Vec<_> = match &s.selected {
        Some(sel) => s.candidates.iter().filter(|c| &c.id == sel).collect(),
        None => s.candidates.iter().collect(),
    };
    for c in candidates {
        for r in &c.reports {
            if r.status == Status::Skipped {
                continue;
            }
            if let Some(e) = &r.errored {
                let id = format!("{}/{}/errored", r.layer, r.check);
                rules
                    .entry(id.clone())
                    .or_insert_with(|| format!("{} check `{}` could not run", r.layer, r.check));
                results.push(json!({
                    "ruleId": id,
                    "level": "error",
                    "message": {"text": e},
                    "properties": {"candidate": c.id, "layer": r.layer, "check": r.check},
                }));
            }
            for i in &r.issues {
                rules
                    .entry(i.rule.clone())
                    .or_insert_with(|| format!("{} check `{}`", r.layer, r.check));
                let mut result = json!({
                    "ruleId": i.rule,
                    "level": level(i.effective_severity(r.advisory)),
                    "message": {"text": i.message},
                    "properties": {
                        "candidate": c.id, "layer": r.layer, "check": r.check,
                        "severity": i.severity, "confidence": i.confidence,
                    },
                });
                if let Some(path) = &i.path {
                    let mut loc =
                        json!({"artifactLocation": {"uri": path, "uriBaseId": "SRCROOT"}});
                    if let Some(line) = i.line.filter(|l| *l > 0) {
                        loc["region"] = json!({"startLine": line});
                    }
                    result["locations"] = json!([{"physicalLocation": loc}]);
                }
                results.push(result);
            }
        }
    }
    let rules: Vec<Value> = rules
        .into_iter()
        .map(|(id, text)| json!({"id": id, "shortDescription": {"text": text}}))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "rascal",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "automationDetails": {"id": format!("rascal/{}", s.run)},
            "properties": {"base": s.base, "selected": s.selected},
            "results": results,
        }]
    })
}
