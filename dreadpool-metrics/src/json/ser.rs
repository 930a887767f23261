//! [`Serializer`]: serde's data model written as compact JSON, as
//! serde_json's compact writer writes it (the same bytes: field order,
//! escapes, number spelling).

use super::error::{Error, ErrorKind};
use super::float;
use serde::ser::{self, Serialize};

/// Writes one value as compact JSON into a byte buffer.
pub(crate) struct Serializer {
    out: Vec<u8>,
}

impl Serializer {
    /// A serializer writing into an empty buffer.
    pub(crate) fn new() -> Self {
        Serializer { out: Vec::new() }
    }

    /// The bytes written.
    pub(crate) fn into_inner(self) -> Vec<u8> {
        self.out
    }

    fn write_u64(&mut self, value: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.out.extend_from_slice(&digits[at..]);
    }

    fn write_i64(&mut self, value: i64) {
        if value < 0 {
            self.out.push(b'-');
        }
        self.write_u64(value.unsigned_abs());
    }

    fn write_f64(&mut self, value: f64) {
        // JSON has no NaN or infinity: serde_json writes them as null.
        if value.is_finite() {
            float::write_finite(&mut self.out, value);
        } else {
            self.out.extend_from_slice(b"null");
        }
    }

    fn write_str(&mut self, text: &str) {
        self.out.push(b'"');
        let bytes = text.as_bytes();
        let mut clean_from = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            let escape: &[u8] = match byte {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0x00..=0x1f => &[],
                _ => continue,
            };
            self.out.extend_from_slice(&bytes[clean_from..at]);
            clean_from = at + 1;
            if escape.is_empty() {
                // The other control characters, as serde_json writes them.
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.extend_from_slice(b"\\u00");
                self.out.push(HEX[usize::from(byte >> 4)]);
                self.out.push(HEX[usize::from(byte & 0xf)]);
            } else {
                self.out.extend_from_slice(escape);
            }
        }
        self.out.extend_from_slice(&bytes[clean_from..]);
        self.out.push(b'"');
    }
}

/// An array or object being written: whether a comma goes before the next
/// element, and whether the value is wrapped in a variant's object (whose
/// closing brace then follows the inner closing bracket).
pub(crate) struct Compound<'a> {
    ser: &'a mut Serializer,
    first: bool,
    close: u8,
    in_variant: bool,
}

impl<'a> Compound<'a> {
    fn open(ser: &'a mut Serializer, open: u8, close: u8, in_variant: bool) -> Self {
        ser.out.push(open);
        Compound {
            ser,
            first: true,
            close,
            in_variant,
        }
    }

    fn comma(&mut self) {
        if !self.first {
            self.ser.out.push(b',');
        }
        self.first = false;
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(&mut *self.ser)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.comma();
        self.ser.write_str(key);
        self.ser.out.push(b':');
        value.serialize(&mut *self.ser)
    }

    fn close(self) -> Result<(), Error> {
        self.ser.out.push(self.close);
        if self.in_variant {
            self.ser.out.push(b'}');
        }
        Ok(())
    }
}

impl<'a> ser::Serializer for &'a mut Serializer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { &b"true"[..] } else { &b"false"[..] });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.write_i64(v.into());
        Ok(())
    }

    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.write_i64(v.into());
        Ok(())
    }

    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.write_i64(v.into());
        Ok(())
    }

    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.write_i64(v);
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.out.extend_from_slice(v.to_string().as_bytes());
        Ok(())
    }

    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.write_u64(v.into());
        Ok(())
    }

    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.write_u64(v.into());
        Ok(())
    }

    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.write_u64(v.into());
        Ok(())
    }

    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.write_u64(v);
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.out.extend_from_slice(v.to_string().as_bytes());
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // Widened exactly; serde_json spells an f32 with f32's shortest
        // digits, which no wire type here uses.
        self.write_f64(v.into());
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.write_f64(v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.write_str(v.encode_utf8(&mut [0u8; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.write_str(v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // An array of numbers, as serde_json writes bytes.
        let mut seq = Compound::open(self, b'[', b']', false);
        for byte in v {
            seq.element(byte)?;
        }
        seq.close()
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.write_str(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut object = Compound::open(self, b'{', b'}', false);
        object.field(variant, value)?;
        object.close()
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self, b'[', b']', false))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        self.write_str(variant);
        self.out.push(b':');
        Ok(Compound::open(self, b'[', b']', true))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self, b'{', b'}', false))
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        self.write_str(variant);
        self.out.push(b':');
        Ok(Compound::open(self, b'{', b'}', true))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(KeySerializer(&mut *self.ser))
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.ser.out.push(b':');
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// Writes a map's key: JSON keys are strings, so strings and unit variants
/// are written as they are and numbers, booleans and characters quoted, as
/// serde_json does; anything else is an error.
struct KeySerializer<'a>(&'a mut Serializer);

impl KeySerializer<'_> {
    fn quoted(self, text: &str) -> Result<(), Error> {
        self.0.write_str(text);
        Ok(())
    }
}

fn key_not_a_string<T>() -> Result<T, Error> {
    Err(Error {
        kind: ErrorKind::KeyNotAString,
        at: None,
    })
}

impl ser::Serializer for KeySerializer<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(if v { "true" } else { "false" })
    }

    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(&v.to_string())
    }

    fn serialize_f32(self, _v: f32) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_f64(self, _v: f64) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.quoted(v.encode_utf8(&mut [0u8; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.quoted(v)
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_none(self) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_unit(self) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.quoted(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        key_not_a_string()
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        key_not_a_string()
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        key_not_a_string()
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        key_not_a_string()
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        key_not_a_string()
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        key_not_a_string()
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        key_not_a_string()
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        key_not_a_string()
    }
}
