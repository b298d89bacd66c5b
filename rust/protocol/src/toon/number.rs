//! Numbers: the canonical form the encoder writes and the grammar the decoder reads.
//!
//! Encoding policy: integers are written exactly; floats are written with the
//! shortest digits that round-trip, always in plain decimal (never exponent form),
//! without trailing fractional zeros, with integral values as integers and -0 as 0.
//!
//! Decoding policy (the spec asks implementations to document it): tokens matching
//! the number grammar become numbers; integral values that fit `i64`/`u64` become
//! exact integers (including exponent forms such as `1e3` and `-0`, which becomes
//! `0`); other values become `f64`. A token whose value `f64` cannot represent
//! without loss — an integer literal beyond the 64-bit range that is not exactly
//! an `f64`, or an exponent that overflows — decodes as a string, so no digit is
//! silently changed.

use serde_json::{Number, Value};

/// Appends the canonical TOON form of `number` to `out`.
pub(crate) fn write_number(number: &Number, out: &mut String) {
    if let Some(unsigned) = number.as_u64() {
        out.push_str(itoa::Buffer::new().format(unsigned));
    } else if let Some(signed) = number.as_i64() {
        out.push_str(itoa::Buffer::new().format(signed));
    } else if let Some(float) = number.as_f64() {
        write_f64(float, out);
    } else {
        // Unreachable with the features this crate enables, but a Number that is
        // none of the above still has a textual form.
        out.push_str(&number.to_string());
    }
}

/// 2^63: the first float outside the `i64` range (`i64::MAX as f64` rounds up to it).
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
/// 2^64: the first float outside the `u64` range.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// Appends `value` in canonical plain decimal form. Non-finite values (which a
/// `serde_json::Number` cannot hold) are written as `null`, as the spec maps them.
pub(crate) fn write_f64(value: f64, out: &mut String) {
    if !value.is_finite() {
        out.push_str("null");
        return;
    }
    if value.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&value) {
        // Integral and in range: the integer is exact, and -0.0 lands on "0".
        out.push_str(itoa::Buffer::new().format(value as i64));
        return;
    }
    let mut buffer = zmij::Buffer::new();
    let shortest = buffer.format_finite(value);
    // Shortest digits in plain form are already canonical: a fraction never ends
    // in zero. Only exponent forms (and a defensive `.0`) need rewriting.
    if shortest.bytes().any(|b| b == b'e' || b == b'E') || shortest.ends_with(".0") {
        push_plain_decimal(shortest, out);
    } else {
        out.push_str(shortest);
    }
}

/// Rewrites a shortest-digits rendering such as `1.5e-7`, `1e20` or `0.25` as a
/// plain decimal with no exponent and no trailing fractional zeros.
fn push_plain_decimal(rendered: &str, out: &mut String) {
    let bytes = rendered.as_bytes();
    let (negative, body) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    let (mantissa, exponent) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(e) => (&body[..e], parse_small_exponent(&body[e + 1..])),
        None => (body, 0),
    };

    // Collect the significant digits and where the decimal point falls among them:
    // value = 0.DIGITS × 10^point.
    let mut digits: Vec<u8> = Vec::with_capacity(mantissa.len());
    let mut point: i64 = 0;
    let mut seen_point = false;
    for &b in mantissa {
        if b == b'.' {
            seen_point = true;
        } else {
            digits.push(b);
            if !seen_point {
                point += 1;
            }
        }
    }
    point += exponent;
    let leading_zeros = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..leading_zeros);
    point -= leading_zeros as i64;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        out.push('0');
        return;
    }
    if negative {
        out.push('-');
    }
    let digit_count = digits.len() as i64;
    // The digits are ASCII, so pushing them byte by byte as chars is exact.
    let push_digits = |out: &mut String, slice: &[u8]| {
        out.extend(slice.iter().map(|&d| d as char));
    };
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        push_digits(out, &digits);
    } else if point >= digit_count {
        push_digits(out, &digits);
        out.extend(std::iter::repeat_n('0', (point - digit_count) as usize));
    } else {
        let split = point as usize;
        push_digits(out, &digits[..split]);
        out.push('.');
        push_digits(out, &digits[split..]);
    }
}

fn parse_small_exponent(bytes: &[u8]) -> i64 {
    let (negative, digits) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let magnitude = digits.iter().fold(0i64, |acc, &d| {
        acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The encoder's quoting trigger: `/^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i`.
///
/// Wider than the decoder grammar on purpose: strings such as `05` or `+1` decode
/// as strings either way, but quoting them keeps them from looking like numbers.
pub(crate) fn is_numeric_like(text: &[u8]) -> bool {
    let start = usize::from(matches!(text.first(), Some(b'+' | b'-')));
    match scan_number_shape(text, start) {
        Some(NumberShape { end, .. }) => end == text.len(),
        None => false,
    }
}

struct NumberShape {
    end: usize,
    integral_digits: usize,
    has_fraction_or_exponent: bool,
}

/// Scans `digits(.digits)?([eE][+-]?digits)?` from `start`.
fn scan_number_shape(text: &[u8], start: usize) -> Option<NumberShape> {
    let mut i = start;
    while i < text.len() && text[i].is_ascii_digit() {
        i += 1;
    }
    let integral_digits = i - start;
    if integral_digits == 0 {
        return None;
    }
    let mut has_fraction_or_exponent = false;
    if text.get(i) == Some(&b'.') {
        let fraction_start = i + 1;
        i = fraction_start;
        while i < text.len() && text[i].is_ascii_digit() {
            i += 1;
        }
        if i == fraction_start {
            return None;
        }
        has_fraction_or_exponent = true;
    }
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(text.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exponent_start = i;
        while i < text.len() && text[i].is_ascii_digit() {
            i += 1;
        }
        if i == exponent_start {
            return None;
        }
        has_fraction_or_exponent = true;
    }
    Some(NumberShape {
        end: i,
        integral_digits,
        has_fraction_or_exponent,
    })
}

/// Decodes an unquoted token that may be a number.
///
/// Returns `None` when the token is outside the decoder grammar
/// `/^-?(0|[1-9]\d*)(\.\d+)?(e[+-]?\d+)?$/i` (the caller then keeps it as a
/// string); otherwise the number, or the token as a string when it cannot be
/// represented without loss (see the module policy).
///
/// The short integer, the most common number, is read where the token is; everything
/// else is a call (as a call, the short integer paid as much again for it).
#[inline]
pub(crate) fn decode_number(token: &str) -> Option<Value> {
    let bytes = token.as_bytes();
    let negative = bytes.first() == Some(&b'-');
    let start = usize::from(negative);
    if let Some(magnitude) = short_integer(&bytes[start..]) {
        // At most 18 digits: the negation fits `i64`, and `-0` lands on 0.
        return Some(Value::Number(if negative {
            Number::from(-(magnitude as i64))
        } else {
            Number::from(magnitude)
        }));
    }
    decode_other_number(token, negative)
}

/// [`decode_number`] for every token but a short integer.
#[inline(never)]
fn decode_other_number(token: &str, negative: bool) -> Option<Value> {
    let bytes = token.as_bytes();
    let start = usize::from(negative);
    if let Some(magnitude) = short_decimal(&bytes[start..]) {
        let float = if negative { -magnitude } else { magnitude };
        return Some(float_to_value(float).unwrap_or_else(|| Value::String(token.to_owned())));
    }
    let shape = scan_number_shape(bytes, start)?;
    if shape.end != bytes.len() {
        return None;
    }
    // Forbidden leading zero: `05`, `-007` are strings; `0`, `0.5`, `0e1` are numbers.
    if shape.integral_digits > 1 && bytes[start] == b'0' {
        return None;
    }

    if !shape.has_fraction_or_exponent {
        // At most 19 digits always fit in u64 without overflow checks.
        if shape.integral_digits <= 19 {
            let magnitude = bytes[start..]
                .iter()
                .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
            return Some(Value::Number(if negative {
                match 0i64.checked_sub_unsigned(magnitude) {
                    Some(signed) => Number::from(signed),
                    None => return Some(lossless_float_or_string(token)),
                }
            } else {
                Number::from(magnitude)
            }));
        }
        if !negative {
            if let Ok(unsigned) = token.parse::<u64>() {
                return Some(Value::Number(Number::from(unsigned)));
            }
        }
        return Some(lossless_float_or_string(token));
    }

    let float: f64 = match exact_small_float(&bytes[start..]) {
        Some(magnitude) if negative => -magnitude,
        Some(magnitude) => magnitude,
        None => match token.parse() {
            Ok(float) => float,
            Err(_) => return Some(Value::String(token.to_owned())),
        },
    };
    Some(float_to_value(float).unwrap_or_else(|| Value::String(token.to_owned())))
}

/// The value of `digits` when it is a plain integer of 1 to 18 digits without a leading
/// zero (the common number, read in one pass); `None` sends everything else to the full
/// grammar.
#[inline]
fn short_integer(digits: &[u8]) -> Option<u64> {
    let (&first, _) = digits.split_first()?;
    if digits.len() > 18 || (first == b'0' && digits.len() > 1) {
        return None;
    }
    let mut value = 0u64;
    for &byte in digits {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + u64::from(digit);
    }
    Some(value)
}

/// The value of `digits` when it is `integral.fraction` without an exponent, with at most
/// 18 digits in all, no leading zero and a mantissa of at most 2^53 (the common decimal,
/// read in one pass, with the arithmetic of [`exact_small_float`], so the same result);
/// `None` sends everything else to the full grammar.
#[inline]
fn short_decimal(digits: &[u8]) -> Option<f64> {
    const MAX_EXACT: u64 = 1 << 53;
    const MAX_DIGITS: usize = 18;
    // Nineteen bytes hold at most 19 digits, below 10^19: the mantissa cannot overflow.
    if digits.len() > MAX_DIGITS + 1 {
        return None;
    }
    let mut mantissa = 0u64;
    let mut at = 0;
    let mut fraction_start = None;
    while let Some(&byte) = digits.get(at) {
        let digit = byte.wrapping_sub(b'0');
        if digit <= 9 {
            mantissa = mantissa * 10 + u64::from(digit);
        } else if byte == b'.' && fraction_start.is_none() {
            fraction_start = Some(at + 1);
        } else {
            return None;
        }
        at += 1;
    }
    let fraction_start = fraction_start?;
    let integral_digits = fraction_start - 1;
    let fraction_digits = digits.len() - fraction_start;
    let leading_zero = digits[0] == b'0' && integral_digits > 1;
    if integral_digits == 0 || fraction_digits == 0 || leading_zero || mantissa > MAX_EXACT {
        return None;
    }
    Some(mantissa as f64 / EXACT_POWERS_OF_TEN[fraction_digits])
}

/// Powers of ten that `f64` holds exactly.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of `digits(.digits)?([eE][+-]?digits)?` (already checked against the grammar)
/// when its digits make an integer of at most 2^53 and its decimal exponent is within ±22:
/// then both are exact in `f64` and one multiplication or division rounds correctly, so the
/// result is the one `str::parse` gives (Clinger's fast path). `None` for everything else.
fn exact_small_float(number: &[u8]) -> Option<f64> {
    const MAX_EXACT: u64 = 1 << 53;
    let mut mantissa = 0u64;
    let mut exponent = 0i64;
    let mut at = 0;
    let mut in_fraction = false;
    while let Some(&byte) = number.get(at) {
        match byte {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(byte - b'0');
                if mantissa > MAX_EXACT {
                    return None;
                }
                exponent -= i64::from(in_fraction);
            }
            b'.' => in_fraction = true,
            _ => break,
        }
        at += 1;
    }
    if at < number.len() {
        // `e`, an optional sign, digits: the grammar was checked, so only its size matters.
        let written = &number[at + 1..];
        let (sign, digits) = match written.first() {
            Some(b'-') => (-1, &written[1..]),
            Some(b'+') => (1, &written[1..]),
            _ => (1, written),
        };
        if digits.len() > 3 {
            return None;
        }
        let value = digits
            .iter()
            .fold(0i64, |acc, &digit| acc * 10 + i64::from(digit - b'0'));
        exponent += sign * value;
    }
    let power = *EXACT_POWERS_OF_TEN.get(usize::try_from(exponent.unsigned_abs()).ok()?)?;
    let mantissa = mantissa as f64;
    Some(if exponent < 0 {
        mantissa / power
    } else {
        mantissa * power
    })
}

/// Canonicalises a decoded float: integral values in the 64-bit ranges become
/// integers, -0 becomes 0, non-finite values have no JSON form (`None`).
pub(crate) fn float_to_value(float: f64) -> Option<Value> {
    if !float.is_finite() {
        return None;
    }
    if float == 0.0 {
        return Some(Value::Number(Number::from(0u64)));
    }
    if float.fract() == 0.0 {
        if float > 0.0 && float < TWO_POW_64 {
            return Some(Value::Number(Number::from(float as u64)));
        }
        if (-TWO_POW_63..0.0).contains(&float) {
            return Some(Value::Number(Number::from(float as i64)));
        }
    }
    Number::from_f64(float).map(Value::Number)
}

/// An integer literal outside the 64-bit ranges: a number only if `f64` holds it
/// exactly (its canonical rendering gives back the same digits), else a string.
fn lossless_float_or_string(token: &str) -> Value {
    if let Ok(float) = token.parse::<f64>() {
        if float.is_finite() {
            let mut canonical = String::with_capacity(token.len());
            write_f64(float, &mut canonical);
            if canonical == token {
                if let Some(number) = Number::from_f64(float) {
                    return Value::Number(number);
                }
            }
        }
    }
    Value::String(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f64_text(value: f64) -> String {
        let mut out = String::new();
        write_f64(value, &mut out);
        out
    }

    #[test]
    fn floats_are_plain_shortest_and_canonical() {
        assert_eq!(f64_text(1.5), "1.5");
        assert_eq!(f64_text(1.0), "1");
        assert_eq!(f64_text(-0.0), "0");
        assert_eq!(f64_text(0.000001), "0.000001");
        assert_eq!(f64_text(1e-7), "0.0000001");
        assert_eq!(f64_text(1.5e-7), "0.00000015");
        assert_eq!(f64_text(1e20), "100000000000000000000");
        assert_eq!(f64_text(1e21), "1000000000000000000000");
        assert_eq!(f64_text(1.2345e22), "12345000000000000000000");
        assert_eq!(f64_text(0.3333333333333333), "0.3333333333333333");
        assert_eq!(f64_text(-123.456), "-123.456");
        assert_eq!(f64_text(9007199254740991.0), "9007199254740991");
        // Exactly halfway between …835.2 and …835.3: the even digit, as JavaScript writes it.
        assert_eq!(f64_text(1_756_869_333_633_835.2), "1756869333633835.2");
        assert_eq!(f64_text(f64::MAX).len(), 309);
        assert!(f64_text(f64::MIN_POSITIVE).starts_with("0.000"));
    }

    #[test]
    fn plain_floats_round_trip() {
        for value in [
            1e-300,
            5e-324,
            1.7976931348623157e308,
            123456.789e10,
            0.1,
            2.5e-8,
            -4.2e30,
        ] {
            let text = f64_text(value);
            assert!(!text.contains('e'), "{text}");
            let parsed: f64 = text.parse().expect("plain decimal parses");
            assert_eq!(parsed, value, "{text}");
        }
    }

    #[test]
    fn integers_are_exact() {
        let mut out = String::new();
        write_number(&Number::from(u64::MAX), &mut out);
        assert_eq!(out, "18446744073709551615");
        out.clear();
        write_number(&Number::from(i64::MIN), &mut out);
        assert_eq!(out, "-9223372036854775808");
    }

    #[test]
    fn numeric_like_covers_encoder_quoting_cases() {
        for text in ["42", "-3.14", "1e-6", "05", "+1", "1E+9", "0.5"] {
            assert!(is_numeric_like(text.as_bytes()), "{text}");
        }
        for text in [
            "", "-", "1.", ".5", "1e", "0x10", "1_000", "Infinity", "1.2.3",
        ] {
            assert!(!is_numeric_like(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn the_float_fast_path_agrees_with_parse() {
        for text in [
            "0.5",
            "134.68",
            "1.2309999999999999",
            "4.154999999999999",
            "9007199254740992.5",
            "0.1e-22",
            "123.456e5",
            "7e22",
            "7e23",
            "1e-23",
            "0.000000000000000000000000001",
            "3.14159265358979323846",
            "2.5E+3",
        ] {
            let parsed: f64 = text.parse().expect("a float");
            if let Some(fast) = exact_small_float(text.as_bytes()) {
                assert_eq!(fast.to_bits(), parsed.to_bits(), "{text}");
            }
            if let Some(fast) = short_decimal(text.as_bytes()) {
                assert_eq!(fast.to_bits(), parsed.to_bits(), "{text}");
            }
            assert_eq!(
                decode_number(text),
                Some(float_to_value(parsed).expect("finite")),
                "{text}"
            );
            let negative = format!("-{text}");
            assert_eq!(
                decode_number(&negative),
                Some(float_to_value(-parsed).expect("finite")),
                "{negative}"
            );
        }
        assert_eq!(exact_small_float(b"134.68"), Some(134.68));
        assert_eq!(exact_small_float(b"9007199254740993.0"), None, "past 2^53");
        assert_eq!(exact_small_float(b"1e23"), None, "past 10^22");
        assert_eq!(short_decimal(b"134.68"), Some(134.68));
        assert_eq!(short_decimal(b"0.5"), Some(0.5));
        // Everything else is left to the full grammar.
        for other in [
            "9007199254740993.0",
            "123456789.1234567891",
            "12345678901234567890.5",
            "99999999999999999999",
            "1.",
            ".5",
            "05.5",
            "1.2.3",
            "1.5e3",
            "1",
            "1.x",
        ] {
            assert_eq!(short_decimal(other.as_bytes()), None, "{other}");
        }
        assert_eq!(decode_number("05.5"), None, "a leading zero is a string");
        assert_eq!(decode_number("1."), None);
        assert_eq!(decode_number("-0.0"), Some(json!(0)));
        assert_eq!(decode_number("2.50"), Some(json!(2.5)));
        assert_eq!(decode_number("3.0"), Some(json!(3)));
    }

    #[test]
    fn decoder_grammar_and_canonicalisation() {
        assert_eq!(decode_number("42"), Some(json!(42)));
        assert_eq!(decode_number("-0"), Some(json!(0)));
        assert_eq!(decode_number("-0.0"), Some(json!(0)));
        assert_eq!(decode_number("1.5000"), Some(json!(1.5)));
        assert_eq!(decode_number("-1E+03"), Some(json!(-1000)));
        assert_eq!(decode_number("2.5e2"), Some(json!(250)));
        assert_eq!(decode_number("1e-10"), Some(json!(1e-10)));
        assert_eq!(decode_number("18446744073709551615"), Some(json!(u64::MAX)));
        assert_eq!(decode_number("-9223372036854775808"), Some(json!(i64::MIN)));
        assert_eq!(decode_number("100000000000000000000"), Some(json!(1e20)));
        assert_eq!(
            decode_number("123456789012345678901234567890"),
            Some(json!("123456789012345678901234567890"))
        );
        assert_eq!(decode_number("1e400"), Some(json!("1e400")));
        for text in [
            "05", "-05", "007", ".5", "1.", "+1", "1e", "Infinity", "0x10",
        ] {
            assert_eq!(decode_number(text), None, "{text}");
        }
    }
}
