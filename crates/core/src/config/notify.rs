//! `notify:` in `.rascal/config.yaml`: how rascal gets your attention when a
//! run needs you (a candidate escalated, every candidate finished). `notify:
//! false` turns it all off; `notify: true` (or leaving it out) rings the
//! bell and asks the terminal for a desktop notification; a mapping sets
//! each part: `notify: { bell: true, desktop: true, command: [notify-send,
//! rascal] }`.

use super::yaml::{self, Seg};
use super::{ConfigError, CONFIG_FILE};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// What to do when a run needs a human.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notify {
    /// Ring the terminal bell (`\x07`) in the TUI.
    pub bell: bool,
    /// Ask the terminal for a desktop notification (OSC 777 or OSC 9, where
    /// the terminal is known to show one) in the TUI.
    pub desktop: bool,
    /// A program to run, as an argv list: never through a shell. It gets
    /// `RASCAL_RUN`, `RASCAL_EVENT` (`escalated` or `finished`),
    /// `RASCAL_MESSAGE` (one line) and, for an escalation,
    /// `RASCAL_CANDIDATE`, on top of your environment. It runs as you —
    /// this file is read from the base commit, so it is your repository's
    /// own setting, never a candidate's — in the repository's top folder,
    /// never in a candidate's workspace, for at most 10 s. The TUI runs it
    /// whenever it would ring; a headless run runs it once, at the end. Its
    /// failure is a message (the TUI's status bar, stderr when headless),
    /// never the run's failure.
    pub command: Vec<String>,
}

impl Default for Notify {
    fn default() -> Self {
        Notify {
            bell: true,
            desktop: true,
            command: Vec::new(),
        }
    }
}

impl Notify {
    /// `notify: false`.
    pub fn off() -> Notify {
        Notify {
            bell: false,
            desktop: false,
            command: Vec::new(),
        }
    }
}

/// The mapping form, every key optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    #[serde(default = "yes")]
    bell: bool,
    #[serde(default = "yes")]
    desktop: bool,
    #[serde(default)]
    command: Option<Vec<String>>,
}

fn yes() -> bool {
    true
}

impl<'de> Deserialize<'de> for Notify {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Notify, D::Error> {
        struct Shape;
        impl<'de> Visitor<'de> for Shape {
            type Value = Notify;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "`true`, `false` or a mapping like `{ bell: true, desktop: true, command: [notify-send, rascal] }`",
                )
            }
            fn visit_bool<E: de::Error>(self, on: bool) -> Result<Notify, E> {
                Ok(if on { Notify::default() } else { Notify::off() })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Notify, A::Error> {
                let f = Fields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Notify {
                    bell: f.bell,
                    desktop: f.desktop,
                    command: f.command.unwrap_or_default(),
                })
            }
        }
        d.deserialize_any(Shape)
    }
}

/// `command:`, when given, must name a program.
pub(crate) fn check(text: &str, notify: &Notify) -> Result<(), ConfigError> {
    let empty_program = notify.command.first().is_some_and(|p| p.trim().is_empty());
    let listed_empty = notify.command.is_empty()
        && yaml::locate(text, &[Seg::key("notify"), Seg::key("command")]).is_some();
    if empty_program || listed_empty {
        let loc = yaml::locate(text, &[Seg::key("notify"), Seg::key("command")]);
        return Err(ConfigError {
            file: CONFIG_FILE.into(),
            line: loc.map(|l| l.0),
            column: loc.map(|l| l.1),
            message: "`notify.command` names no program".into(),
            hint: "write the program and its arguments as a list, e.g. `command: [notify-send, rascal]`, or remove `command:`".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Notify;
    use crate::config::Config;

    fn load(text: &str) -> Result<Config, crate::config::ConfigError> {
        Config::from_texts(Some(text), None, None)
    }

    #[test]
    fn notify_reads_as_a_switch_or_a_mapping() {
        assert_eq!(
            load("timeout: 5m\n").unwrap().main.notify,
            Notify::default()
        );
        assert_eq!(load("notify: false\n").unwrap().main.notify, Notify::off());
        assert_eq!(
            load("notify: true\n").unwrap().main.notify,
            Notify::default()
        );
        let n = load("notify: { bell: false, command: [notify-send, rascal] }\n")
            .unwrap()
            .main
            .notify;
        assert!(!n.bell && n.desktop);
        assert_eq!(n.command, vec!["notify-send", "rascal"]);
    }

    #[test]
    fn a_wrong_notify_is_an_error_at_its_line() {
        let e = load("timeout: 5m\nnotify:\n  bel: false\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("unknown field `bel`"), "{e}");
        let e = load("notify: loud\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("a mapping like"), "{e}");
        let e = load("notify:\n  command: []\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.message.contains("names no program"), "{e}");
        // A command is a list, never a shell line.
        let e = load("notify:\n  command: notify-send rascal\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
    }
}
