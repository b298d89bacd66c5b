package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * The Java API registers a server set in the per-user registry of live server sets by default:
 * a private record naming the project roots, the socket directory, the live servers, this
 * process and the host name, never the token, removed by {@code close()}; an option turns it off.
 */
public class LiveSetRegistrationTest {

    @Test
    public void aStartedSetIsRegisteredByDefaultAndRemovedByClose() throws Exception {
        Path project = Files.createTempDirectory("mcp-project").toRealPath();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null,
                options -> options.projectRoots(project).hostName("Registry Test IDE"))) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            Path record = fixture.servers.registryRecord();
            assertTrue(String.valueOf(record), record != null && Files.isRegularFile(record));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(record)));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(record.getParent())));

            String text = new String(Files.readAllBytes(record), StandardCharsets.UTF_8);
            Map<?, ?> fields = (Map<?, ?>) Json.parse(text);
            assertEquals(fixture.servers.directory().toString(), fields.get("socketDirectory"));
            assertEquals(List.of(project.toString()), fields.get("projectRoots"));
            assertEquals(List.of("code"), fields.get("servers"));
            assertEquals(ProcessHandle.current().pid(), ((Number) fields.get("pid")).longValue());
            assertEquals("Registry Test IDE", fields.get("host"));
            String token = new String(Files.readAllBytes(fixture.servers.directory().resolve(Contract.TOKEN_FILE_NAME)),
                    StandardCharsets.UTF_8).trim();
            assertFalse("the record holds the token", text.contains(token));

            fixture.servers.close();
            assertFalse("close() left the record", Files.exists(record));
        } finally {
            TestSupport.deleteRecursively(project);
        }
    }

    @Test
    public void registeringCanBeTurnedOff() throws Exception {
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null, options -> options.registerLiveSet(false))) {
            assertNull(fixture.servers.registryRecord());
        }
    }

    @Test
    public void aHostNameWithAControlCharacterIsRefusedByName() throws Exception {
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null, options -> options.hostName("a\nb"))) {
            throw new AssertionError("a host name with a newline was accepted");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("hostName"));
        }
    }
}
