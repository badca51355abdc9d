//! A JUnit XML results file of any runner (`results:` on a test guardrail
//! whose runner rascal does not know): each `<testcase>` by
//! `classname::name`, failed when it holds `<failure>` or `<error>`,
//! ignored when it holds `<skipped>`, else passed. A file that does not
//! parse, or that holds no `<testsuite>`, is not a result.

use super::Results;
use crate::Error;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

/// The outcome of one case so far.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Seen {
    Passed,
    Ignored,
    Failed,
}

/// The case's name: `classname::name` (just `name` without a class).
fn case_name(e: &BytesStart) -> String {
    let (mut class, mut name) = (String::new(), String::new());
    for a in e.attributes().flatten() {
        let v = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_default();
        match a.key.as_ref() {
            "classname" => class = v,
            "name" => name = v,
            _ => {}
        }
    }
    if class.is_empty() {
        name
    } else {
        format!("{class}::{name}")
    }
}

/// The results of a JUnit XML file. `Err` says why it is not one.
pub fn parse(xml: &str) -> Result<Results, Error> {
    let mut reader = Reader::from_str(xml);
    let mut out = Results::default();
    let mut current: Option<(String, Seen)> = None;
    let mut suites = 0usize;
    let put = |(name, seen): (String, Seen), out: &mut Results| match seen {
        Seen::Passed => out.passed.push(name),
        Seen::Ignored => out.ignored.push(name),
        Seen::Failed => out.failed.push(name),
    };
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) if e.name().as_ref() == "testsuite" => {
                suites += 1
            }
            Ok(Event::Start(e)) if e.name().as_ref() == "testcase" => {
                current = Some((case_name(&e), Seen::Passed))
            }
            Ok(Event::Empty(e)) if e.name().as_ref() == "testcase" => {
                put((case_name(&e), Seen::Passed), &mut out)
            }
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                let seen = match e.name().as_ref() {
                    "failure" | "error" => Seen::Failed,
                    "skipped" => Seen::Ignored,
                    _ => continue,
                };
                if let Some(c) = current.as_mut() {
                    c.1 = c.1.max(seen);
                }
            }
            Ok(Event::End(e)) if e.name().as_ref() == "testcase" => {
                if let Some(c) = current.take() {
                    put(c, &mut out);
                }
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => {
                return Err(Error::Results(format!(
                    "not JUnit XML (at byte {}): {e}",
                    reader.buffer_position()
                )))
            }
        }
    }
    if suites == 0 {
        return Err(Error::Results("not JUnit XML: no <testsuite> in it".into()));
    }
    if current.is_some() {
        return Err(Error::Results(
            "not JUnit XML: a <testcase> is not closed".into(),
        ));
    }
    out.complete = true;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_by_class_and_name_with_their_worst_outcome() {
        let xml = r#"<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="4">
  <testcase classname="calc.Add" name="adds"/>
  <testcase classname="calc.Add" name="negates"><failure message="1 != 2">trace</failure></testcase>
  <testcase classname="calc.Add" name="later"><skipped/></testcase>
  <testcase name="bare"><system-out>x</system-out><error/></testcase>
</testsuite></testsuites>"#;
        let r = parse(xml).unwrap();
        assert_eq!(r.passed, ["calc.Add::adds"]);
        assert_eq!(r.failed, ["calc.Add::negates", "bare"]);
        assert_eq!(r.ignored, ["calc.Add::later"]);
        assert!(r.complete);
    }

    #[test]
    fn what_is_not_junit_says_why() {
        assert!(parse("all tests passed\n")
            .unwrap_err()
            .to_string()
            .contains("no <testsuite>"));
        assert!(parse("<testsuite><testcase name=\"a\">")
            .unwrap_err()
            .to_string()
            .contains("not closed"));
        assert!(parse("<testsuite><testcase name=\"a\"></x>")
            .unwrap_err()
            .to_string()
            .starts_with("not JUnit XML (at byte"));
        // An empty suite is JUnit with no test in it.
        assert_eq!(parse("<testsuite tests=\"0\"/>").unwrap().passed.len(), 0);
    }
}
