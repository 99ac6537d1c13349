//! One setting's declaration: its key, how it is written (with its range),
//! its default, its environment variable and its help text. Each setting
//! is declared once (src/config/top_level.rs, providers.rs, models.rs);
//! the readers here check a value against its declaration, so the range a
//! refusal names is the range the docs show, and `markdown_row` renders
//! the row of docs/configuration.md that a unit test holds the doc to.

use std::ops::Range;

use toml::Spanned;

use crate::base::config_error::ConfigError;

/// How a value is written. The reader checks the ranges; a `Shape` is
/// checked by the code that reads it.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// A whole number in `min..=max`, counted in `unit` (plural, as the
    /// environment refusal names it). A `max` of `u32::MAX` or more is
    /// shown as no upper bound.
    Whole {
        min: u64,
        max: u64,
        unit: &'static str,
    },
    /// A number in `min..=max`.
    Number { min: f64, max: f64 },
    /// `true` or `false` (the environment also takes `1`/`0`, `yes`/`no`).
    Bool,
    /// Anything else, as the docs' Type column writes it.
    Shape(&'static str),
}

impl Ty {
    /// A whole number in `min..=max`, counted in `unit`: one line a
    /// declaration instead of the struct literal.
    pub const fn whole(min: u64, max: u64, unit: &'static str) -> Ty {
        Ty::Whole { min, max, unit }
    }
}

/// A setting's default, as the reader applies it and the docs show it.
#[derive(Debug, Clone, Copy)]
pub enum Default {
    /// The key must be given.
    Required,
    /// Unset: the setting is off or absent.
    None,
    Whole(u64),
    Number(f64),
    Bool(bool),
    /// A string value, shown quoted.
    Text(&'static str),
    /// A default that depends on other keys, as the docs word it.
    Doc(&'static str),
}

/// One setting.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The key in the file (inside its table for nested settings).
    pub key: &'static str,
    pub ty: Ty,
    pub default: Default,
    /// The environment variable that overrides the file, if any.
    pub env: Option<&'static str>,
    /// Why the range is what it is; appended to an out-of-range refusal.
    pub why: &'static str,
    /// The docs' Notes column.
    pub help: &'static str,
}

impl Setting {
    /// A setting with no environment variable and no range reason.
    pub const fn new(key: &'static str, ty: Ty, default: Default, help: &'static str) -> Setting {
        Setting {
            key,
            ty,
            default,
            env: None,
            why: "",
            help,
        }
    }

    pub const fn env(self, name: &'static str) -> Setting {
        Setting {
            env: Some(name),
            ..self
        }
    }

    pub const fn why(self, why: &'static str) -> Setting {
        Setting { why, ..self }
    }

    fn whole_range(&self) -> (u64, u64, &'static str) {
        match self.ty {
            Ty::Whole { min, max, unit } => (min, max, unit),
            _ => panic!("`{}` is not declared a whole number", self.key),
        }
    }

    /// The declared whole-number default (a declaration without one is a
    /// programming error the unit tests catch).
    pub fn whole_default(&self) -> u64 {
        match self.default {
            Default::Whole(n) => n,
            _ => panic!("`{}` has no whole-number default", self.key),
        }
    }

    pub fn number_default(&self) -> f64 {
        match self.default {
            Default::Number(n) => n,
            _ => panic!("`{}` has no number default", self.key),
        }
    }

    pub fn bool_default(&self) -> bool {
        match self.default {
            Default::Bool(b) => b,
            _ => panic!("`{}` has no boolean default", self.key),
        }
    }

    pub fn text_default(&self) -> &'static str {
        match self.default {
            Default::Text(t) => t,
            _ => panic!("`{}` has no text default", self.key),
        }
    }

    /// "1 to 3600", or "at least 1" without an upper bound.
    fn range_text(&self) -> String {
        let (min, max, _) = self.whole_range();
        if max >= u64::from(u32::MAX) {
            format!("at least {min}")
        } else {
            format!("{min} to {max}")
        }
    }

    /// Checks a whole number from the file (read signed, so `-5` is told
    /// its range rather than that it is not a `u64`). `key` is the full
    /// key (`providers[0].max_retries`).
    pub fn check_whole(
        &self,
        value: &Spanned<i64>,
        key: &str,
        at: &At,
    ) -> Result<u64, ConfigError> {
        let (min, max, _) = self.whole_range();
        let n = *value.get_ref();
        match u64::try_from(n) {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => {
                let why = if self.why.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.why)
                };
                Err(at.bad(
                    value.span(),
                    key,
                    format!("{n} is out of range: must be {}{why}", self.range_text()),
                ))
            }
        }
    }

    /// A top-level whole number: the environment's value, else the
    /// file's, else the default.
    pub fn whole(&self, file: Option<Spanned<i64>>, at: &At) -> Result<u64, ConfigError> {
        let mut value = match &file {
            Some(v) => self.check_whole(v, self.key, at)?,
            None => self.whole_default(),
        };
        if let Some(name) = self.env
            && let Some(text) = (at.env)(name)
        {
            let (min, max, unit) = self.whole_range();
            let bound = if max >= u64::from(u32::MAX) {
                format!("{min} or more")
            } else {
                format!("{min} to {max}")
            };
            value = text
                .trim()
                .parse()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| {
                    env_error(
                        name,
                        format!("`{text}` is not a whole number of {unit} ({bound})"),
                    )
                })?;
        }
        Ok(value)
    }

    /// A top-level number within its declared range, else the default.
    pub fn number(&self, file: Option<Spanned<f64>>, at: &At) -> Result<f64, ConfigError> {
        let Ty::Number { min, max } = self.ty else {
            panic!("`{}` is not declared a number", self.key);
        };
        match file {
            Some(v) if !(min..=max).contains(v.get_ref()) => {
                Err(at.bad(v.span(), self.key, format!("must be {min} to {max}")))
            }
            Some(v) => Ok(v.into_inner()),
            None => Ok(self.number_default()),
        }
    }

    /// A top-level boolean: the environment's value, else the file's,
    /// else the default.
    pub fn flag(&self, file: Option<bool>, at: &At) -> Result<bool, ConfigError> {
        let mut value = file.unwrap_or(self.bool_default());
        if let Some(name) = self.env
            && let Some(text) = (at.env)(name)
        {
            value = parse_bool(&text)
                .ok_or_else(|| env_error(name, format!("`{text}` is not true or false")))?;
        }
        Ok(value)
    }

    /// The docs' Type column.
    pub fn type_text(&self) -> String {
        match self.ty {
            Ty::Whole { min, max, .. } if max >= u64::from(u32::MAX) => {
                format!("integer ≥ {min}")
            }
            Ty::Whole { min, max, .. } => format!("integer, {min} to {max}"),
            Ty::Number { min, max } => format!("number, {min} to {max}"),
            Ty::Bool => "boolean".to_owned(),
            Ty::Shape(shape) => shape.to_owned(),
        }
    }

    /// The docs' Default column.
    pub fn default_text(&self) -> String {
        match self.default {
            Default::Required => "required".to_owned(),
            Default::None => "none".to_owned(),
            Default::Whole(n) => format!("`{n}`"),
            Default::Number(n) => format!("`{n}`"),
            Default::Bool(b) => format!("`{b}`"),
            Default::Text(t) => format!("`\"{t}\"`"),
            Default::Doc(d) => d.to_owned(),
        }
    }

    /// The docs' Environment variable column.
    pub fn env_text(&self) -> String {
        match (self.env, self.ty) {
            (None, _) => "none".to_owned(),
            (Some(name), Ty::Bool) => format!("`{name}` (`true`/`false`)"),
            (Some(name), _) => format!("`{name}`"),
        }
    }

    /// The setting's row in docs/configuration.md: with the environment
    /// column for top-level settings, without it for a table's keys.
    pub fn markdown_row(&self, with_env: bool) -> String {
        let env = if with_env {
            format!(" {} |", self.env_text())
        } else {
            String::new()
        };
        format!(
            "| `{}` | {} | {} |{env} {} |",
            self.key,
            self.type_text(),
            self.default_text(),
            self.help
        )
    }
}

/// Where the values being read come from: the file (for a span's line)
/// and the environment.
pub struct At<'a> {
    /// The file's name as refusals show it.
    pub file_name: String,
    pub text: &'a str,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl At<'_> {
    /// `FILE:LINE` of a span.
    pub fn line(&self, span: Range<usize>) -> String {
        format!("{}:{}", self.file_name, line_of(self.text, span.start))
    }

    /// A refusal of a file value.
    pub fn bad(&self, span: Range<usize>, key: &str, message: String) -> ConfigError {
        ConfigError {
            origin: self.line(span),
            key: key.to_owned(),
            message,
        }
    }

    pub fn env(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }
}

/// A refusal of an environment variable's value.
pub fn env_error(name: &str, message: String) -> ConfigError {
    ConfigError {
        origin: format!("environment {name}"),
        key: name.to_owned(),
        message,
    }
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// An environment variable's name: letters, digits and `_`.
pub fn is_env_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
