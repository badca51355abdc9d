//! Themes: semantic style names (`pass`, `selected`, `diff_add`…) loaded
//! from `themes/*.yaml` (compiled in). The code asks for meanings, never
//! colours. NO_COLOR drops every colour and keeps modifiers, so focus and
//! selection stay visible through reverse and bold.

use crate::config::theme::{StyleSpec, ThemeFile};
use ratatui::style::{Color, Modifier, Style};

const PRESETS: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.yaml")),
    ("light", include_str!("../../themes/light.yaml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.yaml"),
    ),
];

macro_rules! styles {
    ($($name:ident),* $(,)?) => {
        /// The semantic styles of the UI.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Theme {
            pub name: String,
            /// syntect theme for diff highlighting; None without colour.
            pub syntax: Option<String>,
            $(pub $name: Style,)*
        }

        impl Theme {
            /// The names of the semantic styles (checked against the file schema).
            #[cfg(test)]
            const NAMES: &[&str] = &[$(stringify!($name)),*];

            fn from_file(f: ThemeFile) -> Result<Theme, String> {
                Ok(Theme {
                    name: f.name,
                    syntax: Some(f.syntax),
                    $($name: style(&f.styles.$name).map_err(|e| format!("style `{}`: {e}", stringify!($name)))?,)*
                })
            }

            /// The same theme without colours (NO_COLOR).
            pub fn without_color(mut self) -> Theme {
                $(self.$name.fg = None; self.$name.bg = None;)*
                self.syntax = None;
                self.selected = self.selected.add_modifier(Modifier::REVERSED | Modifier::BOLD);
                self.border_focus = self.border_focus.add_modifier(Modifier::BOLD);
                self.key = self.key.add_modifier(Modifier::REVERSED);
                self.diff_add_emph = self.diff_add_emph.add_modifier(Modifier::UNDERLINED);
                self.diff_del_emph = self.diff_del_emph.add_modifier(Modifier::UNDERLINED);
                self.fail = self.fail.add_modifier(Modifier::BOLD);
                self
            }
        }
    };
}

crate::with_style_names!(styles);

fn color(s: &str) -> Result<Color, String> {
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() == 6 {
            if let Ok(v) = u32::from_str_radix(hex, 16) {
                return Ok(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
            }
        }
        return Err(format!("bad colour `{s}` (expected #rrggbb)"));
    }
    s.parse::<Color>()
        .map_err(|_| format!("unknown colour `{s}` (a colour name like lightred, or #rrggbb)"))
}

fn style(spec: &StyleSpec) -> Result<Style, String> {
    let mut st = Style::default();
    if let Some(fg) = &spec.fg {
        st = st.fg(color(fg)?);
    }
    if let Some(bg) = &spec.bg {
        st = st.bg(color(bg)?);
    }
    for (on, m) in [
        (spec.bold, Modifier::BOLD),
        (spec.dim, Modifier::DIM),
        (spec.italic, Modifier::ITALIC),
        (spec.underline, Modifier::UNDERLINED),
        (spec.reverse, Modifier::REVERSED),
    ] {
        if on {
            st = st.add_modifier(m);
        }
    }
    Ok(st)
}

impl Theme {
    /// The names of the shipped themes.
    pub fn available() -> Vec<&'static str> {
        PRESETS.iter().map(|(n, _)| *n).collect()
    }

    /// A shipped theme by name; `no_color` applies NO_COLOR.
    pub fn named(name: &str, no_color: bool) -> Result<Theme, String> {
        let text = PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                format!(
                    "unknown theme `{name}`\n  hint: available themes: {}",
                    Theme::available().join(", ")
                )
            })?;
        let theme = Theme::parse(text).map_err(|e| format!("themes/{name}.yaml: {e}"))?;
        Ok(if no_color {
            theme.without_color()
        } else {
            theme
        })
    }

    /// Parse a theme file's text.
    pub fn parse(text: &str) -> Result<Theme, String> {
        Theme::from_file(crate::config::theme::parse(text.as_bytes())?)
    }

    /// NO_COLOR is set (to anything non-empty).
    pub fn no_color_env() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_theme_parses() {
        for n in Theme::available() {
            let t = Theme::named(n, false).unwrap();
            assert_eq!(t.name, n);
        }
    }

    #[test]
    fn the_theme_file_schema_has_exactly_the_themes_styles() {
        assert_eq!(Theme::NAMES, crate::config::theme::STYLE_NAMES);
    }

    #[test]
    fn a_bad_colour_names_the_style() {
        let e = Theme::parse("name: t\nsyntax: x\nstyles:\n  pass: { fg: '#12' }\n").unwrap_err();
        assert!(e.contains("style `pass`: bad colour `#12`"), "{e}");
    }

    #[test]
    fn unknown_theme_lists_the_available_ones() {
        let e = Theme::named("solarized", false).unwrap_err();
        assert!(e.contains("unknown theme `solarized`"), "{e}");
        assert!(e.contains("dark, light, high-contrast"), "{e}");
    }

    #[test]
    fn no_color_keeps_selection_visible() {
        let t = Theme::named("dark", true).unwrap();
        assert_eq!(t.pass.fg, None);
        assert!(t.selected.add_modifier.contains(Modifier::REVERSED));
        assert!(t.syntax.is_none());
    }
}
