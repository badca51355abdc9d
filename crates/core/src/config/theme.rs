//! Theme files (`themes/*.yaml`) read into plain data: style names, colour
//! names and flags as written. The TUI turns them into styles; unknown keys
//! and unknown style names are refused here, with the line.

use serde::Deserialize;

/// One semantic style as written: colours by name (`lightred`) or
/// `#rrggbb`, and modifiers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StyleSpec {
    pub fg: Option<String>,
    pub bg: Option<String>,
    #[serde(default)]
    pub bold: bool,
    #[serde(default)]
    pub dim: bool,
    #[serde(default)]
    pub italic: bool,
    #[serde(default)]
    pub underline: bool,
    #[serde(default)]
    pub reverse: bool,
}

macro_rules! style_specs {
    ($($name:ident),* $(,)?) => {
        /// The styles a theme file may set; a style left out is the default
        /// (no colour, no modifier).
        #[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct StyleSpecs { $(#[serde(default)] pub $name: StyleSpec,)* }

        /// The names of the styles, in file order.
        pub const STYLE_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

/// Calls `$m!` with the one list of semantic style names (the theme file's
/// schema here, the TUI's `Theme` fields there).
#[macro_export]
macro_rules! with_style_names {
    ($m:ident) => {
        $m!(
            text,
            dim,
            title,
            border,
            border_focus,
            selected,
            pass,
            warn,
            fail,
            running,
            pending,
            off,
            overridden,
            diff_add,
            diff_del,
            diff_add_emph,
            diff_del_emph,
            diff_add_line,
            diff_del_line,
            search_match,
            diff_hunk,
            line_no,
            key,
            status_bar,
            dialog,
            error,
            stderr,
            screen,
        );
    };
}

with_style_names!(style_specs);

/// A theme file: its name, the syntect theme for diff highlighting, and
/// the styles.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThemeFile {
    pub name: String,
    pub syntax: String,
    pub styles: StyleSpecs,
}

/// Read a theme file's bytes; the error names the line and column.
pub fn parse(bytes: &[u8]) -> Result<ThemeFile, crate::Error> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| crate::Error::Invalid(format!("not valid UTF-8: {e}")))?;
    super::yaml::from_str("theme", text).map_err(|e| {
        crate::Error::Invalid(match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{} at line {l} column {c}", e.message),
            _ => e.message,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_theme_file_reads_into_plain_data() {
        let f = parse(b"name: t\nsyntax: base16\nstyles:\n  pass: { fg: green, bold: true }\n")
            .unwrap();
        assert_eq!(f.name, "t");
        assert_eq!(f.syntax, "base16");
        assert_eq!(f.styles.pass.fg.as_deref(), Some("green"));
        assert!(f.styles.pass.bold);
        assert_eq!(f.styles.fail, StyleSpec::default());
    }

    #[test]
    fn unknown_styles_and_keys_are_refused_with_the_line() {
        let e = parse(b"name: t\nsyntax: x\nstyles:\n  sparkle: { fg: red }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `sparkle`"), "{e}");
        assert!(e.contains("line 4"), "{e}");
        let e = parse(b"name: t\nsyntax: x\nstyles:\n  pass: { colour: red }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `colour`"), "{e}");
        assert!(
            parse(b"name: t\nstyles: {}\n").is_err(),
            "syntax is required"
        );
    }
}
