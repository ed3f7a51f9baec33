//! The D corpus: small programs in tests/corpus/, each with its expected
//! result. `name.d` runs as `dtrace -q -s name.d`; `name.out` is its exact
//! stdout (exit status 0), or `name.err` its exact stderr (exit status 1),
//! where the script's path is written `SCRIPT`.

use super::*;

#[test]
fn every_corpus_program_gives_its_expected_result() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut programs: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "d"))
        .collect();
    programs.sort();
    let mut failures = Vec::new();
    for program in &programs {
        let path = program.to_string_lossy().into_owned();
        let out = run(&["-q", "-s", &path]);
        out.assert_no_panic();
        let expected_out = program.with_extension("out");
        let expected_err = program.with_extension("err");
        if let Ok(want) = std::fs::read_to_string(&expected_out) {
            if out.code() != 0 || out.stdout != want {
                failures.push(format!(
                    "{path}: want stdout {want:?}, got {:?} (status {}, stderr {:?})",
                    out.stdout,
                    out.code(),
                    out.stderr
                ));
            }
        } else if let Ok(want) = std::fs::read_to_string(&expected_err) {
            let want = want.replace("SCRIPT", &path);
            if out.code() != 1 || out.stderr != want {
                failures.push(format!("{path}: want stderr {want:?}, got {:?} (status {})", out.stderr, out.code()));
            }
        } else {
            failures.push(format!("{path}: no .out or .err file"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus programs failed:\n{}",
        failures.len(),
        programs.len(),
        failures.join("\n")
    );
}
