//! Writing an f64: the shortest text that reads back as the same bits,
//! laid out as serde_json lays it out.
//!
//! The digits come from the standard library's shortest round-trip
//! formatting (`{:e}`), which is exact: parsed back (by this codec, by
//! serde_json with `float_roundtrip`, by any correct reader) they give the
//! same f64. The layout (when to use an exponent, the `.0` on whole
//! numbers, the `+` of a positive exponent) follows serde_json's, so that
//! the exporter's lines are what they were when it wrote them with
//! serde_json. The digits can differ in one rare case: when two shortest
//! spellings are equally near the f64 (`…536.2` and `…536.3`), the
//! standard library takes the upper and serde_json the even one. Both read
//! back as the same f64.

use std::io::Write as _;

/// The most digits before the point written without an exponent (ryu's
/// limit): larger numbers are written as `1.5e17`.
const MAX_PLAIN_INTEGER_DIGITS: i32 = 16;

/// The most zeros after the point before the digits of a small number
/// (`0.0000123`): smaller numbers are written as `1.23e-6`.
const MAX_LEADING_FRACTION_ZEROS: i32 = 4;

/// Appends `value`, which must be finite, to `out`.
pub(super) fn write_finite(out: &mut Vec<u8>, value: f64) {
    if value.is_sign_negative() {
        out.push(b'-');
    }
    let mut scientific = [0u8; 32];
    let mut cursor = std::io::Cursor::new(&mut scientific[..]);
    // The longest `{:e}` of an f64 is 17 digits, a point, `e` and a
    // three-digit negative exponent: 23 bytes, well within the buffer.
    if write!(cursor, "{:e}", value.abs()).is_err() {
        return out.extend_from_slice(b"0.0");
    }
    let written = cursor.position() as usize;
    let text = &scientific[..written];
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e') {
        Some(e) => (&text[..e], &text[e + 1..]),
        None => (text, &b"0"[..]),
    };
    let exponent: i32 = std::str::from_utf8(exponent)
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let mut digits = [0u8; 24];
    let mut length = 0;
    for &b in mantissa.iter().filter(|b| b.is_ascii_digit()) {
        if let Some(slot) = digits.get_mut(length) {
            *slot = b;
            length += 1;
        }
    }
    lay_out(out, &digits[..length], exponent);
}

/// Appends `digits` (d.ddd × 10^`exponent`, no sign) in serde_json's
/// layout.
fn lay_out(out: &mut Vec<u8>, digits: &[u8], exponent: i32) {
    let length = digits.len() as i32;
    // The value is 0.DIGITS × 10^point: `point` digits stand before the
    // decimal point.
    let point = exponent + 1;
    if length <= point && point <= MAX_PLAIN_INTEGER_DIGITS {
        // A whole number: the digits, zeros, and `.0`.
        out.extend_from_slice(digits);
        out.extend(std::iter::repeat_n(b'0', (point - length) as usize));
        out.extend_from_slice(b".0");
    } else if 0 < point && point <= MAX_PLAIN_INTEGER_DIGITS {
        // A point inside the digits.
        let (whole, fraction) = digits.split_at(point as usize);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(fraction);
    } else if (-MAX_LEADING_FRACTION_ZEROS..=0).contains(&point) {
        // A small number: `0.`, zeros, the digits.
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-point) as usize));
        out.extend_from_slice(digits);
    } else {
        // An exponent: `1e+300`, `1.5e-7`.
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.extend_from_slice(first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        // serde_json marks a positive exponent: `1e+300`.
        out.push(b'e');
        if exponent >= 0 {
            out.push(b'+');
        }
        let _ = write!(out, "{exponent}");
    }
}
