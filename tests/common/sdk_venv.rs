//! The venv under `target/` with the official `openai` and `anthropic`
//! Python SDKs, shared by the encoder check (`tests/codec_python_sdk.rs`)
//! and the proxy's SDK tests (`tests/proxy_python_sdk.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv's Python, built once (a stamp file marks a finished install),
/// or why it could not be had (no `python3 -m venv`, no pip or no PyPI).
/// `TOOLSTREAM_PYTHON` names the base interpreter.
pub(crate) fn sdk_python(target_dir: &Path) -> Result<PathBuf, String> {
    let venv = target_dir.join("sdk-venv");
    let py = venv.join("bin/python");
    let stamp = venv.join(".toolstream-sdks");
    if stamp.exists() {
        return Ok(py);
    }
    let base = std::env::var("TOOLSTREAM_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&base)
        .args(["-m", "venv", venv.to_str().unwrap()])
        .status()
        .map(|s| s.success());
    if ok.ok() != Some(true) {
        return Err(format!("could not create a venv with `{base} -m venv`"));
    }
    let ok = Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "openai>=1.50",
            "anthropic>=0.40",
        ])
        .status()
        .map(|s| s.success());
    if ok.ok() != Some(true) {
        return Err("`pip install openai anthropic` failed (no pip or no access to PyPI)".into());
    }
    std::fs::write(&stamp, b"openai anthropic\n").unwrap();
    Ok(py)
}
