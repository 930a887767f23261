//! [`Error`]: what went wrong reading or writing JSON, and where.

use std::fmt;

/// A JSON error: what went wrong and, when reading, the byte offset in the
/// input where it was found.
///
/// Errors raised by serde itself (a missing field, a wrong type) carry
/// serde's message, with the offset at which the codec was reading when
/// serde gave up, as serde_json reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    /// What went wrong.
    pub(crate) kind: ErrorKind,
    /// The byte offset in the input, when reading; `None` when writing.
    pub(crate) at: Option<usize>,
}

/// What went wrong: the kinds of [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// serde's own message: a missing field, an unexpected type, an
    /// unknown variant.
    Message(Box<str>),
    /// The input ended inside a value.
    UnexpectedEnd,
    /// The input is not UTF-8.
    InvalidUtf8,
    /// A value was expected here (`null`, `true`, `false`, a number, a
    /// string, an array or an object).
    ExpectedValue,
    /// A literal started but was not `null`, `true` or `false`.
    InvalidLiteral,
    /// A `:` was expected after an object's key.
    ExpectedColon,
    /// A `,` or the end of the array or object was expected.
    ExpectedCommaOrEnd,
    /// An object's key was not a string.
    KeyMustBeString,
    /// A `,` was followed by the end of the array or object.
    TrailingComma,
    /// More than whitespace followed the value.
    TrailingCharacters,
    /// A number that does not follow JSON's grammar (leading zeros, a
    /// bare `-`, a `.` or an exponent without digits).
    InvalidNumber,
    /// A number too large for an f64.
    NumberOutOfRange,
    /// A backslash followed by a character that JSON does not escape.
    InvalidEscape,
    /// A `\u` not followed by four hexadecimal digits.
    InvalidUnicodeEscape,
    /// A `\u` escape of half a surrogate pair, without its other half.
    LoneSurrogate,
    /// An unescaped control character (below U+0020) inside a string.
    ControlCharacterInString,
    /// Arrays and objects nested deeper than the codec follows.
    DepthLimitExceeded,
    /// An object key that cannot be written as a JSON string.
    KeyNotAString,
}

impl Error {
    /// An error of `kind` at byte offset `at` of the input.
    pub(crate) fn at(kind: ErrorKind, at: usize) -> Self {
        Error { kind, at: Some(at) }
    }

    /// This error, placed at `at` unless it already has a place.
    pub(crate) fn or_at(mut self, at: usize) -> Self {
        self.at.get_or_insert(at);
        self
    }

    fn message(text: impl fmt::Display) -> Self {
        Error {
            kind: ErrorKind::Message(text.to_string().into_boxed_str()),
            at: None,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::Message(text) => text,
            ErrorKind::UnexpectedEnd => "unexpected end of input",
            ErrorKind::InvalidUtf8 => "invalid UTF-8",
            ErrorKind::ExpectedValue => "expected a value",
            ErrorKind::InvalidLiteral => "expected null, true or false",
            ErrorKind::ExpectedColon => "expected `:`",
            ErrorKind::ExpectedCommaOrEnd => "expected `,` or the end of the array or object",
            ErrorKind::KeyMustBeString => "an object key must be a string",
            ErrorKind::TrailingComma => "trailing comma",
            ErrorKind::TrailingCharacters => "trailing characters",
            ErrorKind::InvalidNumber => "invalid number",
            ErrorKind::NumberOutOfRange => "number out of range",
            ErrorKind::InvalidEscape => "invalid escape",
            ErrorKind::InvalidUnicodeEscape => "invalid \\u escape",
            ErrorKind::LoneSurrogate => "lone surrogate in a \\u escape",
            ErrorKind::ControlCharacterInString => "control character in a string",
            ErrorKind::DepthLimitExceeded => "nested too deeply",
            ErrorKind::KeyNotAString => "an object key must be a string",
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(at) => write!(f, "{} at byte {at}", self.kind),
            None => self.kind.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(text: T) -> Self {
        Error::message(text)
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(text: T) -> Self {
        Error::message(text)
    }
}
