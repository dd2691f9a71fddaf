//! Runs the `toolstream` binary as a user does: arguments, bytes on stdin,
//! and what it printed and exited with. For the CLI test suites (built only
//! with the `cli` feature, which builds the binary).
#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::process::{Command, Stdio};

/// What one run of the binary gave.
pub(crate) struct Run {
    /// The exit code (-1 when a signal ended it).
    pub code: i32,
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// Stdout, lossily decoded.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs the binary with `args`, writing `stdin` (then closing it).
pub(crate) fn run(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolstream"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolstream binary runs");
    // A run that does not read stdin (a FILE argument, `--chunks FILE`, bad
    // arguments) may exit before it is written: a broken pipe is then not
    // the test's failure.
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
    let out = child.wait_with_output().expect("wait for toolstream");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
