package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.TestSupport;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * A repository that names a marker-writing program for every way git can be made to run one:
 * the git tools of the headless host run none of them, while plain git, on the same repository,
 * runs every one (so the test cannot pass because a program was never reachable).
 */
public class HostileRepositoryTest {
    /** Each program the repository names, by the marker it writes. */
    private static final List<String> PROGRAMS = Arrays.asList("clean", "smudge", "process", "textconv", "command",
            "external", "pager", "pagerlog", "fsmonitor", "hook", "ssh", "gpg", "gpgssh", "credential");

    @Test
    public void theGitToolsRunNoProgramTheRepositoryNamesAndPlainGitRunsEveryOne() throws Exception {
        try (TestProject project = new TestProject().withGit()) {
            Path markers = Files.createDirectories(project.temp.resolve("markers"));
            plant(project, markers);

            try (HeadlessHost host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp));
                 McpClient vcs = TestSupport.initializedClient(host.servers().socketPath(Server.VCS))) {
                String status = ok(vcs, "status", "{}");
                assertTrue(status, status.contains("a.txt") && status.contains("s.txt"));
                assertTrue(ok(vcs, "diff", "{}").contains("+three"));
                ok(vcs, "diff", "{\"staged\":true}");
                for (String path : new String[] {"a.txt", "b.ext", "c.proc", "README.md"}) {
                    assertFalse(ok(vcs, "diff", "{\"path\":\"" + path + "\"}").contains("empty: true"));
                }
                String log = ok(vcs, "log", "{}");
                assertTrue(log, log.contains("ssh signed") && log.contains("pgp signed"));
                ok(vcs, "log", "{\"path\":\"lazy.txt\"}");
                assertTrue(ok(vcs, "blame", "{\"path\":\"a.txt\"}").contains("three"));
                ok(vcs, "blame", "{\"path\":\"README.md\"}");
                // The blob of lazy.txt is missing: git would fetch it from the promisor remote over
                // core.sshCommand; here the call fails instead.
                vcs.run("blame", "{\"path\":\"lazy.txt\"}");
                ok(vcs, "status", "{}");
            }
            assertEquals("no program the repository names ran through the host's git tools",
                    new TreeSet<String>(), markersIn(markers));

            // The control: the same repository with plain git runs every program it names.
            plainGit(project, "status");
            plainGit(project, "diff", "--", "b.ext");
            plainGit(project, "diff", "--", "README.md");
            plainGit(project, "diff", "--", "c.proc");
            plainGit(project, "log", "--max-count=5");
            plainGit(project, "blame", "a.txt");
            plainGit(project, "blame", "lazy.txt");
            onATerminal(project, "git log -1");
            onATerminal(project, "git diff -- README.md");
            run(project, "protocol=https\nhost=example.com\n\n", "git", "credential", "fill");
            plainGit(project, "checkout", "HEAD", "--", "s.txt");
            plainGit(project, "add", "README.md");
            assertEquals("plain git runs every program the repository names", new TreeSet<>(PROGRAMS),
                    markersIn(markers));
        }
    }

    @Test
    public void everyDriverNameIsOverriddenWhateverItsCharactersAndAStrangeOneIsRefused() throws Exception {
        List<String> keys = new ArrayList<>();
        for (String[] override : Git.driverOverrides("core.pager\ncat\0filter.a=b.c.clean\nx\0diff.X Y.textconv\0"
                + "credential.https://h.example.helper\nh\0merge.m.name\nM\0user.name\nA\0")) {
            keys.add(override[0] + "=" + override[1]);
        }
        assertEquals(Arrays.asList("filter.a=b.c.clean=", "filter.a=b.c.smudge=", "filter.a=b.c.process=",
                "filter.a=b.c.required=false", "diff.X Y.textconv=", "diff.X Y.command=",
                "credential.https://h.example.helper=", "merge.m.driver="), keys);
        for (String name : new String[] {"\u00e9vil", "a\u001bb", "\ufffd"}) {
            try {
                Git.driverOverrides("filter." + name + ".clean\nx\0");
                throw new AssertionError("a driver named " + name + " was accepted");
            } catch (java.io.IOException expected) {
                assertTrue(expected.getMessage(), expected.getMessage().contains("refused"));
            }
        }
    }

    @Test
    public void aGitTooOldForTheOverridesIsNotUsed() {
        assertTrue(Git.recentEnough("git version 2.47.3\n"));
        assertTrue(Git.recentEnough("git version 2.31.0.windows.1"));
        assertTrue(Git.recentEnough("git version 3.0.0"));
        assertFalse(Git.recentEnough("git version 2.30.9"));
        assertFalse(Git.recentEnough("git version 1.99.0"));
        assertFalse(Git.recentEnough("not git at all"));
    }

    private static String ok(McpClient client, String tool, String args) throws Exception {
        McpClient.ToolResult result = client.run(tool, args);
        assertFalse(tool + " " + args + ": " + result.text(), result.isError());
        return result.text();
    }

    /**
     * Makes {@code project} (a git repository with one commit) hostile: a program per marker, and
     * attributes, config, includes, a hook, signed commits and a partial clone that name them.
     */
    private static void plant(TestProject project, Path markers) throws Exception {
        Path root = project.root;
        for (String name : PROGRAMS) {
            String body = "#!/bin/sh\n: > '" + markers.resolve(name) + "'\n"
                    + (name.equals("clean") || name.equals("smudge") ? "exec cat\n" : "")
                    + (name.equals("textconv") ? "exec cat \"$1\"\n" : "")
                    // A signature program reads what it checks; exiting first would kill git with SIGPIPE.
                    + (name.startsWith("gpg") ? "cat > /dev/null\n" : "")
                    + "exit 0\n";
            Path script = root.resolve("tools/mark-" + name);
            TestProject.write(script, body);
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        String tools = root.resolve("tools").toString();
        TestProject.write(root.resolve("a.txt"), "one\ntwo\n");
        TestProject.write(root.resolve("s.txt"), "smudged on checkout\n");
        TestProject.write(root.resolve("b.ext"), "b\n");
        TestProject.write(root.resolve("c.proc"), "c\n");
        TestProject.write(root.resolve("lazy.txt"), "fetched lazily\n");
        TestProject.write(root.resolve(".gitattributes"), "*.txt filter=evil diff=conv\n*.proc filter=evilproc\n");
        TestProject.write(root.resolve("evil.inc"), "[filter \"evil\"]\n\tclean = " + tools + "/mark-clean\n"
                + "\tsmudge = " + tools + "/mark-smudge\n[filter \"evilproc\"]\n\tprocess = " + tools + "/mark-process\n");
        TestProject.write(root.resolve("evil2.inc"), "[diff \"conv\"]\n\ttextconv = " + tools + "/mark-textconv\n");
        project.git("add", "-A");
        project.git("-c", "user.name=Ada Lovelace", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "Hostile");
        // Two commits signed (with signatures no one can check), so that log.showSignature asks a program.
        String tree = run(project, null, "git", "rev-parse", "HEAD^{tree}").trim();
        String parent = run(project, null, "git", "rev-parse", "HEAD").trim();
        String pgp = signedCommit(project, tree, parent, "PGP", "pgp signed");
        String ssh = signedCommit(project, tree, pgp, "SSH", "ssh signed");
        project.git("update-ref", "refs/heads/main", ssh);
        String lazy = run(project, null, "git", "rev-parse", "HEAD:lazy.txt").trim();
        Files.delete(root.resolve(".git/objects/" + lazy.substring(0, 2) + "/" + lazy.substring(2)));

        TestProject.write(root.resolve(".git/info/attributes"), "*.ext diff=extdrv\n");
        TestProject.write(root.resolve("allowed-signers"), "");
        String config = new String(Files.readAllBytes(root.resolve(".git/config")), StandardCharsets.UTF_8)
                + "[include]\n\tpath = ../evil.inc\n"
                + "[includeIf \"onbranch:main\"]\n\tpath = ../evil2.inc\n"
                + "[diff \"extdrv\"]\n\tcommand = " + tools + "/mark-command\n"
                + "[diff]\n\texternal = " + tools + "/mark-external\n"
                + "[core]\n\tpager = " + tools + "/mark-pager\n\tfsmonitor = " + tools + "/mark-fsmonitor\n"
                + "\tsshCommand = " + tools + "/mark-ssh\n"
                + "[pager]\n\tlog = " + tools + "/mark-pagerlog\n"
                + "[log]\n\tshowSignature = true\n"
                + "[gpg]\n\tprogram = " + tools + "/mark-gpg\n"
                + "[gpg \"ssh\"]\n\tprogram = " + tools + "/mark-gpgssh\n\tallowedSignersFile = " + root.resolve("allowed-signers") + "\n"
                + "[credential]\n\thelper = " + tools + "/mark-credential\n"
                + "[remote \"origin\"]\n\turl = ssh://example.invalid/repo.git\n\tpromisor = true\n"
                + "[extensions]\n\tpartialClone = origin\n";
        TestProject.write(root.resolve(".git/config"), config);
        Path hook = root.resolve(".git/hooks/post-index-change");
        TestProject.write(hook, "#!/bin/sh\n: > '" + markers.resolve("hook") + "'\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));

        // Changes in the working tree, for status, diff and blame to look at.
        TestProject.write(root.resolve("a.txt"), "one\nthree\n");
        TestProject.write(root.resolve("b.ext"), "b changed\n");
        TestProject.write(root.resolve("c.proc"), "c changed\n");
        TestProject.write(root.resolve("README.md"), "# Demo, hostile\n");
        Files.delete(root.resolve("s.txt"));
        try (Stream<Path> planted = Files.list(markers)) {
            for (Path marker : planted.collect(Collectors.toList())) {
                Files.delete(marker);
            }
        }
    }

    private static String signedCommit(TestProject project, String tree, String parent, String kind, String subject)
            throws Exception {
        String commit = "tree " + tree + "\nparent " + parent + "\n"
                + "author Ada Lovelace <ada@example.com> 1700000000 +0000\n"
                + "committer Ada Lovelace <ada@example.com> 1700000000 +0000\n"
                + "gpgsig -----BEGIN " + kind + " SIGNATURE-----\n AAAA\n -----END " + kind + " SIGNATURE-----\n\n"
                + subject + "\n";
        return run(project, commit, "git", "hash-object", "-t", "commit", "-w", "--stdin").trim();
    }

    private static TreeSet<String> markersIn(Path markers) throws Exception {
        try (Stream<Path> files = Files.list(markers)) {
            return files.map(file -> file.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    private static void plainGit(TestProject project, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add("git");
        command.addAll(Arrays.asList(args));
        run(project, null, command.toArray(new String[0]));
    }

    /** {@code line} run by {@code script}, whose standard output is a pseudo-terminal (git starts a pager only there). */
    private static void onATerminal(TestProject project, String line) throws Exception {
        run(project, null, "script", "-q", "-e", "-c", line, "/dev/null");
    }

    /** Runs {@code command} in the project with the test's environment; its output, whatever its exit code. */
    private static String run(TestProject project, String input, String... command) throws Exception {
        List<String> bounded = new ArrayList<>(Arrays.asList("timeout", "-k", "5", "30"));
        bounded.addAll(Arrays.asList(command));
        ProcessBuilder builder = new ProcessBuilder(bounded).directory(project.root.toFile()).redirectErrorStream(true);
        builder.environment().put("GIT_TERMINAL_PROMPT", "0");
        if (input == null) {
            builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process process = builder.start();
        if (input != null) {
            process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        }
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        process.waitFor(40, TimeUnit.SECONDS);
        return new String(output, StandardCharsets.UTF_8);
    }
}
