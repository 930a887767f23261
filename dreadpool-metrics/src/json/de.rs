//! [`Deserializer`]: JSON text read into serde's data model, driven by the
//! input (`deserialize_any`), as serde's internally tagged enums and
//! `flatten` need: they buffer whatever the input holds before choosing a
//! type.
//!
//! Strict where serde_json is strict (RFC 8259 grammar, escapes, lone
//! surrogates, control characters, trailing characters), with the same
//! nesting limit, so that hostile input on the exporter's socket gets an
//! error and never a panic or a stack overflow.

use super::error::{Error, ErrorKind};
use serde::de::{self, DeserializeSeed, Visitor};

/// How deeply arrays and objects may nest: serde_json's limit (its 128th
/// level is refused), so that anything one accepts the other does.
const MAX_DEPTH: usize = 127;

/// Reads one JSON value from UTF-8 text.
pub(crate) struct Deserializer<'de> {
    text: &'de str,
    at: usize,
    depth: usize,
    /// A string with escapes, unescaped (strings without escapes are
    /// borrowed from the input instead).
    scratch: String,
}

/// A number as the input spells it, classified as serde_json classifies
/// it: no fraction or exponent and non-negative is a u64, negative an i64,
/// anything else (or out of range) an f64.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Unsigned(u64),
    Negative(i64),
    Float(f64),
}

/// A string read from the input: borrowed when it had no escapes.
enum Text<'de, 's> {
    Borrowed(&'de str),
    Unescaped(&'s str),
}

impl<'de> Deserializer<'de> {
    /// A deserializer of `bytes`, which must be UTF-8.
    pub(crate) fn from_slice(bytes: &'de [u8]) -> Result<Self, Error> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::at(ErrorKind::InvalidUtf8, e.valid_up_to()))?;
        Ok(Deserializer {
            text,
            at: 0,
            depth: 0,
            scratch: String::new(),
        })
    }

    /// Succeeds if only whitespace is left.
    pub(crate) fn end(&mut self) -> Result<(), Error> {
        match self.peek_past_whitespace() {
            None => Ok(()),
            Some(_) => Err(self.error(ErrorKind::TrailingCharacters)),
        }
    }

    fn error(&self, kind: ErrorKind) -> Error {
        Error::at(kind, self.at)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn peek_past_whitespace(&mut self) -> Option<u8> {
        while let Some(byte) = self.peek() {
            if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(byte);
            }
            self.at += 1;
        }
        None
    }

    /// The next non-whitespace byte, which must be there.
    fn next_significant(&mut self) -> Result<u8, Error> {
        self.peek_past_whitespace()
            .ok_or_else(|| self.error(ErrorKind::UnexpectedEnd))
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Error> {
        for &expected in word {
            match self.peek() {
                None => return Err(self.error(ErrorKind::UnexpectedEnd)),
                Some(byte) if byte == expected => self.at += 1,
                Some(_) => return Err(self.error(ErrorKind::InvalidLiteral)),
            }
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), Error> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(ErrorKind::DepthLimitExceeded));
        }
        self.depth += 1;
        self.at += 1;
        Ok(())
    }

    /// Consumes the closing `close` of an array or object whose elements
    /// the visitor has read.
    fn leave(&mut self, close: u8) -> Result<(), Error> {
        self.depth -= 1;
        match self.peek_past_whitespace() {
            Some(byte) if byte == close => {
                self.at += 1;
                Ok(())
            }
            // The visitor stopped early: there are elements it did not read.
            Some(b',') => Err(self.error(ErrorKind::TrailingCharacters)),
            Some(_) => Err(self.error(ErrorKind::ExpectedCommaOrEnd)),
            None => Err(self.error(ErrorKind::UnexpectedEnd)),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Number, Error> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    return Err(self.error(ErrorKind::InvalidNumber));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            None => return Err(self.error(ErrorKind::UnexpectedEnd)),
            Some(_) => return Err(self.error(ErrorKind::InvalidNumber)),
        }
        let integer_end = self.at;
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.at += 1;
            float = true;
            if self.digits() == 0 {
                return Err(self.number_error());
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            float = true;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.number_error());
            }
        }
        if !float {
            let magnitude = self.text.get(start + usize::from(negative)..integer_end);
            if let Some(magnitude) = magnitude.and_then(|m| m.parse::<u64>().ok()) {
                if !negative {
                    return Ok(Number::Unsigned(magnitude));
                }
                // `-0` is an f64, as serde_json reads it: the sign is kept.
                if magnitude != 0 {
                    if let Some(value) = 0i64.checked_sub_unsigned(magnitude) {
                        return Ok(Number::Negative(value));
                    }
                }
            }
        }
        let text = self.text.get(start..self.at).unwrap_or_default();
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Number::Float(value)),
            _ => Err(Error::at(ErrorKind::NumberOutOfRange, start)),
        }
    }

    fn number_error(&self) -> Error {
        match self.peek() {
            None => self.error(ErrorKind::UnexpectedEnd),
            Some(_) => self.error(ErrorKind::InvalidNumber),
        }
    }

    /// Reads a string; the opening quote is next.
    fn string<'s>(&'s mut self) -> Result<Text<'de, 's>, Error> {
        self.at += 1;
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut clean_from = start;
        let mut escaped = false;
        self.scratch.clear();
        loop {
            let Some(&byte) = bytes.get(self.at) else {
                return Err(self.error(ErrorKind::UnexpectedEnd));
            };
            match byte {
                b'"' => {
                    let tail = self.text.get(clean_from..self.at).unwrap_or_default();
                    self.at += 1;
                    if !escaped {
                        return Ok(Text::Borrowed(tail));
                    }
                    self.scratch.push_str(tail);
                    return Ok(Text::Unescaped(&self.scratch));
                }
                b'\\' => {
                    let run = self.text.get(clean_from..self.at).unwrap_or_default();
                    self.scratch.push_str(run);
                    escaped = true;
                    self.at += 1;
                    let unescaped = self.escape()?;
                    self.scratch.push(unescaped);
                    clean_from = self.at;
                }
                0x00..=0x1f => return Err(self.error(ErrorKind::ControlCharacterInString)),
                _ => self.at += 1,
            }
        }
    }

    /// Reads the escape after a backslash.
    fn escape(&mut self) -> Result<char, Error> {
        let Some(byte) = self.peek() else {
            return Err(self.error(ErrorKind::UnexpectedEnd));
        };
        let simple = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.at += 1;
                return self.unicode_escape();
            }
            _ => return Err(self.error(ErrorKind::InvalidEscape)),
        };
        self.at += 1;
        Ok(simple)
    }

    /// Reads the rest of a `\u` escape (and the low half of a surrogate
    /// pair, which must follow a high half at once).
    fn unicode_escape(&mut self) -> Result<char, Error> {
        let first = self.hex4()?;
        let code = match first {
            0xd800..=0xdbff => {
                let pair_at = self.at;
                if self.text.as_bytes().get(pair_at..pair_at + 2) != Some(b"\\u") {
                    return Err(match self.peek() {
                        None => self.error(ErrorKind::UnexpectedEnd),
                        Some(_) => self.error(ErrorKind::LoneSurrogate),
                    });
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xdc00..=0xdfff).contains(&second) {
                    return Err(Error::at(ErrorKind::LoneSurrogate, pair_at));
                }
                0x10000 + ((u32::from(first) - 0xd800) << 10) + (u32::from(second) - 0xdc00)
            }
            0xdc00..=0xdfff => return Err(self.error(ErrorKind::LoneSurrogate)),
            other => u32::from(other),
        };
        char::from_u32(code).ok_or_else(|| self.error(ErrorKind::InvalidUnicodeEscape))
    }

    fn hex4(&mut self) -> Result<u16, Error> {
        let mut value: u16 = 0;
        for _ in 0..4 {
            let digit = match self.peek() {
                None => return Err(self.error(ErrorKind::UnexpectedEnd)),
                Some(byte) => (byte as char)
                    .to_digit(16)
                    .ok_or_else(|| self.error(ErrorKind::InvalidUnicodeEscape))?,
            };
            value = (value << 4) | digit as u16;
            self.at += 1;
        }
        Ok(value)
    }

    /// Calls `visitor` with the string that is next (the quote included).
    fn visit_string<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, Error> {
        match self.string()? {
            Text::Borrowed(text) => visitor.visit_borrowed_str(text),
            Text::Unescaped(text) => visitor.visit_str(text),
        }
    }

    fn any<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, Error> {
        match self.next_significant()? {
            b'n' => {
                self.literal(b"null")?;
                visitor.visit_unit()
            }
            b't' => {
                self.literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                visitor.visit_bool(false)
            }
            b'-' | b'0'..=b'9' => match self.number()? {
                Number::Unsigned(n) => visitor.visit_u64(n),
                Number::Negative(n) => visitor.visit_i64(n),
                Number::Float(n) => visitor.visit_f64(n),
            },
            b'"' => self.visit_string(visitor),
            b'[' => {
                self.enter()?;
                let value = visitor.visit_seq(Elements::new(self))?;
                self.leave(b']')?;
                Ok(value)
            }
            b'{' => {
                self.enter()?;
                let value = visitor.visit_map(Entries::new(self))?;
                self.leave(b'}')?;
                Ok(value)
            }
            _ => Err(self.error(ErrorKind::ExpectedValue)),
        }
    }
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // serde's own errors (a missing field, a wrong type) are placed
        // where the reading stopped.
        self.any(visitor).map_err(|e| e.or_at(self.at))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.next_significant()? == b'n' {
            self.literal(b"null")?;
            return visitor.visit_none().map_err(|e: Error| e.or_at(self.at));
        }
        visitor.visit_some(&mut *self).map_err(|e| e.or_at(self.at))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(&mut *self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.next_significant()? {
            // A unit variant: its name.
            b'"' => visitor
                .visit_enum(UnitVariant(&mut *self))
                .map_err(|e| e.or_at(self.at)),
            // Any other variant: an object of one key, its name.
            b'{' => {
                self.enter()?;
                let value = visitor
                    .visit_enum(VariantWithContent(&mut *self))
                    .map_err(|e| e.or_at(self.at))?;
                self.leave(b'}')?;
                Ok(value)
            }
            _ => Err(self.error(ErrorKind::ExpectedValue)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // Read through like any value (and with the same depth limit), with
        // a visitor that keeps nothing.
        self.any(de::IgnoredAny)?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier
    }
}

/// The elements of an array, for a visitor.
struct Elements<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'a, 'de> Elements<'a, 'de> {
    fn new(de: &'a mut Deserializer<'de>) -> Self {
        Elements { de, first: true }
    }
}

impl<'de> de::SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.de.next_significant()? {
            b']' => return Ok(None),
            b',' if !self.first => {
                self.de.at += 1;
                if self.de.next_significant()? == b']' {
                    return Err(self.de.error(ErrorKind::TrailingComma));
                }
            }
            _ if self.first => {}
            _ => return Err(self.de.error(ErrorKind::ExpectedCommaOrEnd)),
        }
        self.first = false;
        seed.deserialize(&mut *self.de).map(Some)
    }
}

/// The entries of an object, for a visitor.
struct Entries<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'a, 'de> Entries<'a, 'de> {
    fn new(de: &'a mut Deserializer<'de>) -> Self {
        Entries { de, first: true }
    }
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.de.next_significant()? {
            b'}' => return Ok(None),
            b',' if !self.first => {
                self.de.at += 1;
                match self.de.next_significant()? {
                    b'"' => {}
                    b'}' => return Err(self.de.error(ErrorKind::TrailingComma)),
                    _ => return Err(self.de.error(ErrorKind::KeyMustBeString)),
                }
            }
            b'"' if self.first => {}
            _ if self.first => return Err(self.de.error(ErrorKind::KeyMustBeString)),
            _ => return Err(self.de.error(ErrorKind::ExpectedCommaOrEnd)),
        }
        self.first = false;
        seed.deserialize(MapKey(&mut *self.de)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        if self.de.next_significant()? != b':' {
            return Err(self.de.error(ErrorKind::ExpectedColon));
        }
        self.de.at += 1;
        seed.deserialize(&mut *self.de)
    }
}

/// An object's key (a string is next): a string, or a number or boolean
/// in a string when the key's type asks for one, as serde_json reads keys.
struct MapKey<'a, 'de>(&'a mut Deserializer<'de>);

impl MapKey<'_, '_> {
    /// The key's text, parsed as a `T`.
    fn parsed<T: std::str::FromStr>(self) -> Result<T, Error> {
        let at = self.0.at;
        let text = match self.0.string()? {
            Text::Borrowed(text) => text,
            Text::Unescaped(text) => text,
        };
        text.parse()
            .map_err(|_| Error::at(ErrorKind::Message("a key of the wrong type".into()), at))
    }
}

macro_rules! parsed_keys {
    ($($method:ident $visit:ident $type:ty),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                let value: $type = self.parsed()?;
                visitor.$visit(value)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for MapKey<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.0.visit_string(visitor)
    }

    parsed_keys! {
        deserialize_bool visit_bool bool,
        deserialize_i8 visit_i8 i8,
        deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32,
        deserialize_i64 visit_i64 i64,
        deserialize_i128 visit_i128 i128,
        deserialize_u8 visit_u8 u8,
        deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32,
        deserialize_u64 visit_u64 u64,
        deserialize_u128 visit_u128 u128,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(UnitVariant(self.0))
    }

    serde::forward_to_deserialize_any! {
        f32 f64 char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// An enum written as its variant's name (a string is next): only a unit
/// variant can be read from it.
struct UnitVariant<'a, 'de>(&'a mut Deserializer<'de>);

impl<'de> de::EnumAccess<'de> for UnitVariant<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let variant = seed.deserialize(MapKey(&mut *self.0))?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value, Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::UnitVariant,
            &"newtype variant",
        ))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::UnitVariant,
            &"tuple variant",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::UnitVariant,
            &"struct variant",
        ))
    }
}

/// An enum written as `{"variant": content}` (the `{` is consumed).
struct VariantWithContent<'a, 'de>(&'a mut Deserializer<'de>);

impl<'de> de::EnumAccess<'de> for VariantWithContent<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        if self.0.next_significant()? != b'"' {
            return Err(self.0.error(ErrorKind::KeyMustBeString));
        }
        let variant = seed.deserialize(MapKey(&mut *self.0))?;
        if self.0.next_significant()? != b':' {
            return Err(self.0.error(ErrorKind::ExpectedColon));
        }
        self.0.at += 1;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for VariantWithContent<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        de::Deserialize::deserialize(self.0)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self.0)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_any(self.0, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_any(self.0, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Result<Number, Error> {
        let mut de = Deserializer::from_slice(text.as_bytes())?;
        let n = de.number()?;
        de.end()?;
        Ok(n)
    }

    #[test]
    fn numbers_are_classified_as_serde_json_classifies_them() {
        assert_eq!(number("0"), Ok(Number::Unsigned(0)));
        assert_eq!(
            number("18446744073709551615"),
            Ok(Number::Unsigned(u64::MAX))
        );
        assert_eq!(
            number("18446744073709551616"),
            Ok(Number::Float(18446744073709551616.0))
        );
        assert_eq!(number("-1"), Ok(Number::Negative(-1)));
        assert_eq!(
            number("-9223372036854775808"),
            Ok(Number::Negative(i64::MIN))
        );
        assert_eq!(
            number("-9223372036854775809"),
            Ok(Number::Float(-9223372036854775809.0))
        );
        assert!(matches!(number("-0"), Ok(Number::Float(z)) if z == 0.0 && z.is_sign_negative()));
        assert_eq!(number("1.0"), Ok(Number::Float(1.0)));
        assert_eq!(number("1e2"), Ok(Number::Float(100.0)));
        assert_eq!(number("1E+2"), Ok(Number::Float(100.0)));
        assert_eq!(number("5e-324"), Ok(Number::Float(5e-324)));
        for bad in [
            "01", "-", "1.", ".5", "1e", "1e+", "+1", "-a", "0x1", "1.e3",
        ] {
            assert!(number(bad).is_err(), "{bad}");
        }
        assert_eq!(
            number("1e400").map_err(|e| e.kind),
            Err(ErrorKind::NumberOutOfRange)
        );
    }
}
