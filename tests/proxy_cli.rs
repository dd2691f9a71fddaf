//! `toolstream proxy` as a command: refuses what it cannot do, starts fast
//! and says what it will do, and stops cleanly on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolstream"))
}

#[cfg(unix)]
#[test]
fn emulate_mode_starts_and_says_what_it_sends() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut child = bin()
        .args([
            "proxy",
            "--upstream",
            &format!("http://{dead}"),
            "--listen",
            "127.0.0.1:0",
            "--model",
            "SmolLM2-135M-Instruct",
            "--mode",
            "emulate",
        ])
        .env("TOOLSTREAM_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut banner = String::new();
    for _ in 0..5 {
        banner.push_str(&lines.next().unwrap().unwrap());
        banner.push('\n');
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(banner.contains("mode emulate"), "{banner}");
    // The emulation is described (format, size class, tool cut), not the
    // native "tools forwarded" line.
    assert!(banner.contains("emulate: "), "{banner}");
    assert!(banner.contains("prompt for small models"), "{banner}");
    assert!(!banner.contains("tools forwarded"), "{banner}");
}

#[test]
fn bad_config_is_refused() {
    let out = bin().args(["proxy"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no upstream"));
    let dir = std::env::temp_dir().join(format!("ts-proxy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("proxy.toml");
    std::fs::write(&cfg, "upstream = \"http://127.0.0.1:9\"\nlisen = \"x\"\n").unwrap();
    let out = bin()
        .args(["proxy", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lisen"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn starts_fast_says_what_it_does_and_stops_on_sigterm() {
    // An upstream that is not there: the proxy still starts and says so.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let t0 = Instant::now();
    let mut child = bin()
        .args([
            "proxy",
            "--upstream",
            &format!("http://{dead}"),
            "--listen",
            "127.0.0.1:0",
            "--model",
            "Qwen/Qwen2.5-Coder-7B-Instruct",
        ])
        .env("TOOLSTREAM_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let started = t0.elapsed();
    assert!(
        first.starts_with("toolstream proxy listening on http://127.0.0.1:"),
        "{first}"
    );
    let mut banner = String::new();
    for _ in 0..4 {
        banner.push_str(&lines.next().unwrap().unwrap());
        banner.push('\n');
    }
    assert!(banner.contains("not reachable at start-up"), "{banner}");
    assert!(
        banner.contains("model Qwen/Qwen2.5-Coder-7B-Instruct (in-content calls: "),
        "{banner}"
    );
    assert!(banner.contains("mode auto"), "{banner}");
    eprintln!("started in {started:?}");
    assert!(started < Duration::from_secs(5), "{started:?}");
    // SIGTERM to the process this test started.
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
