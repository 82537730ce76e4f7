//! Every kind of core error (`snowmint::ErrorKind::ALL`, the one table of
//! kinds) through the real binary: each kind a command can meet ends with
//! the exit code this test expects for it (2 for bad input, 1 for "not
//! now"), the core's message on stderr and nothing on stdout for the bad
//! value. The HTTP, gRPC, PostgreSQL and Python front ends walk the same
//! table in their own tests.

use std::process::{Command, Output};

use snowmint::ErrorKind;
use snowmint_test_support::faketime::libfaketime;

/// The `snowmint` binary under test.
const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

/// How the binary meets a kind, and what must come of it.
enum Case {
    /// These arguments (and environment) end with `code`, and stderr says
    /// `says`.
    Run {
        args: &'static [&'static str],
        env: Vec<(&'static str, String)>,
        code: i32,
        says: &'static str,
    },
    /// No command can meet this kind; why.
    Unreachable(&'static str),
}

/// The case of each kind: a new kind fails to compile here until it has
/// one.
fn case(kind: ErrorKind) -> Case {
    let run = |args, code, says| Case::Run {
        args,
        env: Vec::new(),
        code,
        says,
    };
    match kind {
        ErrorKind::OutOfRange => run(
            &[
                "encode",
                "--timestamp",
                "1700000000000",
                "--datacenter",
                "32",
                "--machine",
                "0",
                "--sequence",
                "0",
            ],
            2,
            "datacenter 32 is out of range (0..=31)",
        ),
        ErrorKind::InvalidText => run(&["decode", "12a"], 2, "ID \"12a\" is not a decimal integer"),
        ErrorKind::UnknownName => run(
            &["decode", "--input", "b64", "1"],
            2,
            "unknown encoding \"b64\"",
        ),
        ErrorKind::InvalidFields => run(
            &[
                "encode",
                "--layout",
                "discord",
                "--timestamp",
                "1700000000000",
                "--field",
                "worker=1",
                "--datacenter",
                "1",
            ],
            2,
            "field worker is given twice",
        ),
        ErrorKind::InvalidLayout => run(
            &["layout", "--layout", "41/5/5/13"],
            2,
            "invalid layout: widths 41+5+5+13 add up to 64 bits, not 63",
        ),
        ErrorKind::EmptyWindow => run(
            &["range", "--from", "1700000000001", "--to", "1700000000000"],
            2,
            "time window is empty",
        ),
        // The clock steps an hour back after the first few readings, while
        // IDs are being made: the default policy refuses.
        ErrorKind::ClockBehind => Case::Run {
            args: &[
                "generate",
                "--datacenter",
                "1",
                "--machine",
                "2",
                "--count",
                "10000000",
            ],
            env: vec![
                ("LD_PRELOAD", libfaketime().display().to_string()),
                ("FAKETIME", "-1h".to_owned()),
                ("FAKETIME_START_AFTER_NUMCALLS", "10".to_owned()),
                ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
            ],
            code: 1,
            // `generate` mints through the node's issuer (lock and mark),
            // whose refusal names both readings.
            says: "the clock is behind the IDs this slot may already have issued",
        },
        ErrorKind::SequenceExhausted => {
            Case::Unreachable("every command waits for the next millisecond when one is used up")
        }
    }
}

fn run(args: &[&str], env: &[(&'static str, String)]) -> Output {
    // `generate` keeps the node's lock and mark in a state directory: one
    // of the test's own, not the user's.
    let state = snowmint_test_support::temp::temp_dir("error-kinds");
    let mut command = Command::new(SNOWMINT);
    command.args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("SNOWMINT_") {
            command.env_remove(name);
        }
    }
    command.env("SNOWMINT_STATE_DIR", state.path());
    command.envs(env.iter().map(|(name, value)| (name, value)));
    command.output().expect("running snowmint")
}

/// Each kind the binary can meet ends with the exit code of its kind and
/// the core's message.
#[test]
fn every_kind_ends_with_its_exit_code() {
    let mut reached = 0;
    for &kind in ErrorKind::ALL {
        let (args, env, code, says) = match case(kind) {
            Case::Run {
                args,
                env,
                code,
                says,
            } => (args, env, code, says),
            Case::Unreachable(why) => {
                eprintln!("{kind:?} is not met by any command: {why}");
                continue;
            }
        };
        let output = run(args, &env);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{kind:?}: snowmint {args:?}\n{stderr}"
        );
        assert!(
            stderr.starts_with("error: ") && stderr.contains(says),
            "{kind:?}: snowmint {args:?} should say {says:?}:\n{stderr}"
        );
        if code == 2 {
            assert!(output.stdout.is_empty(), "{kind:?}: output for a bad value");
        } else {
            assert!(
                !stderr.contains("Usage:"),
                "{kind:?}: not the arguments' fault, so no usage:\n{stderr}"
            );
        }
        reached += 1;
    }
    // All but sequence exhaustion, which no command meets.
    assert_eq!(reached, ErrorKind::ALL.len() - 1);
}
