//! Runs the hostile-memory machinery on small inputs and checks the results are well-formed:
//! the server was measured and still answers, every decoder row has an outcome, the section
//! renders. No figure is asserted: they belong in the real run.
#![allow(clippy::unwrap_used)]

use ide_mcp_bench::hostile::{dense_array, run, to_markdown, HostileInput};
use ide_mcp_bench::machine::Machine;
use ide_mcp_bench::wire::Wire;

#[test]
fn small_hostile_inputs_are_measured_and_the_section_renders() {
    let inputs = [
        HostileInput {
            title: "a small TOON table",
            wire: Wire::Frames,
            payload: b"items[3]{k}:\n  1\n  2\n  3\n".to_vec(),
            bound: "bounded",
        },
        HostileInput {
            title: "a small dense array",
            wire: Wire::Lines,
            payload: dense_array(4096),
            bound: "bounded",
        },
    ];
    let results = run(env!("CARGO_BIN_EXE_ide-mcp-bench").as_ref(), &inputs);
    assert_eq!(results.len(), 2);
    for result in &results {
        let server = result.server.as_ref().unwrap();
        assert!(server.still_answers, "{server:?}");
        assert!(!server.answer.is_empty());
        assert_eq!(result.decoders.len(), 2);
        assert!(result.decoders.iter().all(|row| !row.outcome.is_empty()));
    }
    let section = to_markdown(&results, &Machine::current());
    assert!(section.starts_with("## Memory under hostile input"));
    assert!(section.contains("### (2) a small dense array"));
}
