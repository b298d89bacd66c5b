"""Runs a stdio MCP server command and records the lines in both directions.

    python stdio_tap.py LOG COMMAND ARGS...

Standard input is passed to COMMAND and standard output back, unchanged; every line is also
appended to LOG as `> line` (client to server) or `< line` (server to client). Exits with the
command's status once it has ended.
"""

import subprocess
import sys
import threading


def main() -> int:
    log_path, *command = sys.argv[1:]
    assert command, __doc__
    log = open(log_path, "a", encoding="utf-8", buffering=1)
    lock = threading.Lock()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def record(prefix: str, line: bytes) -> None:
        with lock:
            log.write(prefix + line.decode("utf-8", errors="replace").rstrip("\n") + "\n")

    def forward_stdin() -> None:
        try:
            for line in sys.stdin.buffer:
                record("> ", line)
                child.stdin.write(line)
                child.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                child.stdin.close()
            except OSError:
                pass

    threading.Thread(target=forward_stdin, daemon=True).start()
    for line in child.stdout:
        record("< ", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
