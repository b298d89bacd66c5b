package dev.lain.claudejb.mcp;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * Numbers ({@code rust/protocol/src/toon/number.rs}): the canonical form the encoder writes
 * (plain decimal, no exponent, no trailing zeros, {@code -0} as {@code 0}) and the grammar the
 * decoder reads. A token that is no number of the grammar, has leading zeros, or lies beyond any
 * float decodes as the string it is.
 */
final class ToonNumber {
    private ToonNumber() {
    }

    /** Numbers in plain decimal: no exponent, no trailing zeros, {@code -0} as {@code 0}. */
    static void writeNumber(Number number, StringBuilder out) {
        BigDecimal decimal;
        if (number instanceof BigDecimal) {
            decimal = (BigDecimal) number;
        } else if (number instanceof BigInteger) {
            decimal = new BigDecimal((BigInteger) number);
        } else if (number instanceof Double || number instanceof Float) {
            double value = number.doubleValue();
            if (Double.isNaN(value) || Double.isInfinite(value)) {
                out.append("null");
                return;
            }
            decimal = new BigDecimal(Double.toString(value));
        } else {
            decimal = BigDecimal.valueOf(number.longValue());
        }
        if (decimal.signum() == 0) {
            out.append('0');
        } else {
            out.append(decimal.stripTrailingZeros().toPlainString());
        }
    }

    static boolean isAsciiDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** [end, integralDigits, hasFractionOrExponent], or null when no number starts at {@code start}. */
    private static int[] scanNumberShape(String text, int start) {
        int i = start;
        int n = text.length();
        while (i < n && isAsciiDigit(text.charAt(i))) {
            i++;
        }
        int integralDigits = i - start;
        if (integralDigits == 0) {
            return null;
        }
        int fractionOrExponent = 0;
        if (i < n && text.charAt(i) == '.') {
            int fractionStart = ++i;
            while (i < n && isAsciiDigit(text.charAt(i))) {
                i++;
            }
            if (i == fractionStart) {
                return null;
            }
            fractionOrExponent = 1;
        }
        if (i < n && (text.charAt(i) == 'e' || text.charAt(i) == 'E')) {
            i++;
            if (i < n && (text.charAt(i) == '+' || text.charAt(i) == '-')) {
                i++;
            }
            int exponentStart = i;
            while (i < n && isAsciiDigit(text.charAt(i))) {
                i++;
            }
            if (i == exponentStart) {
                return null;
            }
            fractionOrExponent = 1;
        }
        return new int[] {i, integralDigits, fractionOrExponent};
    }

    static boolean isNumericLike(String text) {
        int start = !text.isEmpty() && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        int[] shape = scanNumberShape(text, start);
        return shape != null && shape[0] == text.length();
    }

    /** A number token as a {@link BigDecimal}; {@code null} when it is not one (then it is a string). */
    static BigDecimal decodeNumber(String token) {
        boolean negative = token.startsWith("-");
        int start = negative ? 1 : 0;
        int[] shape = scanNumberShape(token, start);
        if (shape == null || shape[0] != token.length()) {
            return null;
        }
        if (shape[1] > 1 && token.charAt(start) == '0') {
            return null; // leading zeros: a string such as "05"
        }
        BigDecimal value;
        try {
            value = new BigDecimal(token);
        } catch (NumberFormatException | ArithmeticException e) {
            return null;
        }
        if (shape[2] == 1 && Double.isInfinite(value.doubleValue())) {
            return null; // beyond any float, like 1e400: kept as the string it is
        }
        return value.signum() == 0 ? BigDecimal.ZERO : value;
    }
}
