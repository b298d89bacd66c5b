package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.Test;

public class JsonTest {
    @Test
    public void valuesRoundTrip() {
        String text = "{\"a\":[1,2.5,-3e2,true,false,null],\"b\":{\"c\":\"d\\u0000\\n\"},\"e\":\"\uD83D\uDE00\"}";
        Object parsed = Json.parse(text);
        assertEquals(parsed, Json.parse(Json.write(parsed)));
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("a", Arrays.asList(new BigDecimal("1"), new BigDecimal("2.5"), new BigDecimal("-3e2"), true, false, null));
        Map<String, Object> inner = new LinkedHashMap<>();
        inner.put("c", "d\u0000\n");
        expected.put("b", inner);
        expected.put("e", "\uD83D\uDE00");
        assertEquals(expected, parsed);
    }

    @Test
    public void duplicateKeysAreRejected() {
        rejects("{\"a\":1,\"a\":2}");
    }

    @Test
    public void malformedTextIsRejected() {
        rejects("{\"a\":}");
        rejects("[1,]");
        rejects("01");
        rejects("\"unterminated");
        rejects("{} trailing");
        rejects("\"tab\there\"");
    }

    @Test
    public void deepNestingIsRejected() {
        StringBuilder deep = new StringBuilder();
        for (int i = 0; i < Json.MAX_DEPTH + 2; i++) {
            deep.append('[');
        }
        rejects(deep.toString());
    }

    private static void rejects(String text) {
        try {
            Json.parse(text);
            fail("accepted " + text);
        } catch (IllegalArgumentException expected) {
            // Refused, as it should be.
        }
    }

    @Test
    public void prettyTextIndentsAndReadsBackToTheSameValue() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("name", "a\u00e9\ud83d\ude00");
        value.put("list", Arrays.asList(1L, new LinkedHashMap<>(), Arrays.asList()));
        String pretty = Json.writePretty(value);
        assertEquals("{\n  \"name\": \"a\u00e9\ud83d\ude00\",\n  \"list\": [\n    1,\n    {},\n    []\n  ]\n}", pretty);
        assertEquals(Json.write(value), Json.write(Json.parse(pretty)));
    }
}
