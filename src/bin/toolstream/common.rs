//! What every subcommand shares: exit codes and error messages, the limit
//! options, incremental reading of the input, and stderr verbosity.

// `pub` is this module's interface to the other modules of the binary.
#![allow(unreachable_pub)]

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

use toolstream::{LimitKind, Limits};

/// Why a subcommand failed; each kind has one exit code, the same in every
/// subcommand (documented in `--help`):
///
/// * 0: done (a `parse` or `decode` of bad input is still done: what went
///   wrong is in the events);
/// * 1 ([`Failure::Input`]): the input could not give what was asked —
///   `repair` found no JSON or a limit cut the document, `decode` got
///   something that is no provider stream;
/// * 2 ([`Failure::Usage`], [`Failure::Io`]): a bad option or option file,
///   an input that cannot be read, output that cannot be written.
#[derive(Debug)]
pub enum Failure {
    /// A bad option, or a file an option names that cannot be used.
    Usage(String),
    /// Reading the input or writing the output failed.
    Io(String, io::Error),
    /// The input could not give the result asked for.
    Input(String),
}

impl Failure {
    fn code(&self) -> u8 {
        match self {
            Failure::Input(_) => 1,
            Failure::Usage(_) | Failure::Io(..) => 2,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Input(m) => f.write_str(m),
            Failure::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

/// A write to standard output failed.
pub fn write_failed(e: io::Error) -> Failure {
    Failure::Io("cannot write output".into(), e)
}

/// The exit code of a subcommand's result, its message printed as
/// `toolstream <command>: <message>`. A closed standard output (`| head`)
/// is no failure.
pub fn finish(command: &str, result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Io(_, e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("toolstream {command}: {f}");
            ExitCode::from(f.code())
        }
    }
}

/// How much goes to standard error besides failures: 0 `-q` (nothing),
/// 1 (default: warnings), 2 `-v` (also every diagnostic).
static VERBOSITY: AtomicU8 = AtomicU8::new(1);

/// Sets the verbosity from `-q` / `-v`.
pub fn set_verbosity(quiet: bool, verbose: bool) {
    let v = if quiet {
        0
    } else if verbose {
        2
    } else {
        1
    };
    VERBOSITY.store(v, Ordering::Relaxed);
}

/// Prints a warning (`toolstream <command>: warning: …`) unless `-q`.
pub fn warn(command: &str, message: impl fmt::Display) {
    if VERBOSITY.load(Ordering::Relaxed) >= 1 {
        eprintln!("toolstream {command}: warning: {message}");
    }
}

/// True with `-v`: every diagnostic is also printed on standard error.
pub fn verbose() -> bool {
    VERBOSITY.load(Ordering::Relaxed) >= 2
}

/// A byte size on the command line: `4096`, `64KiB`, `16M`, `1G`, or
/// `none` for no limit (`usize::MAX`). Printed as it would be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub usize);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n == usize::MAX {
            f.write_str("none")
        } else if n >= 1 << 30 && n % (1 << 30) == 0 {
            write!(f, "{}GiB", n >> 30)
        } else if n >= 1 << 20 && n % (1 << 20) == 0 {
            write!(f, "{}MiB", n >> 20)
        } else if n >= 1 << 10 && n % (1 << 10) == 0 {
            write!(f, "{}KiB", n >> 10)
        } else {
            write!(f, "{n}")
        }
    }
}

/// A [`Size`] or count that is none of the accepted spellings.
#[derive(Debug)]
pub struct BadSize(String);

impl fmt::Display for BadSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a size (a number of bytes, with an optional K, M or G suffix, or `none`)",
            self.0
        )
    }
}

impl std::error::Error for BadSize {}

impl FromStr for Size {
    type Err = BadSize;
    fn from_str(s: &str) -> Result<Self, BadSize> {
        let t = s.trim().to_ascii_lowercase();
        if matches!(t.as_str(), "none" | "unlimited" | "max") {
            return Ok(Size(usize::MAX));
        }
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        let (num, unit) = t.split_at(digits);
        let n: usize = num.parse().map_err(|_| BadSize(s.to_owned()))?;
        let shift = match unit.trim() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            _ => return Err(BadSize(s.to_owned())),
        };
        n.checked_mul(1 << shift)
            .map(Size)
            .ok_or_else(|| BadSize(s.to_owned()))
    }
}

/// Resource limits (`toolstream::Limits`); each may also be `none`.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Limits (a size: 4096, 64KiB, 16M, 1G or none)")]
pub struct LimitArgs {
    /// Maximum JSON nesting depth; a deeper value is cut there.
    #[arg(long, value_name = "N", default_value_t = Size(Limits::default().max_depth))]
    pub max_depth: Size,
    /// Maximum size of one call's arguments (`repair`: of one value's
    /// output); the call is cut there, `truncated`.
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::default().max_args_bytes))]
    pub max_args_bytes: Size,
    /// Maximum bytes held while deciding whether something is a call; past
    /// it they are text, with a diagnostic (`parse`, `decode --reparse-content`).
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::default().max_held_bytes))]
    pub max_held_bytes: Size,
    /// Maximum size of one held token (key, number, bare word); a longer
    /// one is written as it stands, with a `limit_exceeded` repair.
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::default().max_token_bytes))]
    pub max_token_bytes: Size,
    /// Maximum length of one markup tag of the XML dialects; a longer `<…`
    /// is text (`parse`, `decode --reparse-content`).
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::default().max_tag_bytes))]
    pub max_tag_bytes: Size,
    /// Maximum number of repairs listed for one call (more are made, one
    /// `repairs_omitted` marks the rest).
    #[arg(long, value_name = "N", default_value_t = Size(Limits::default().max_repairs))]
    pub max_repairs: Size,
    /// Maximum input bytes read for one stream; past it nothing more is
    /// parsed (`parse`: passed through as text with a diagnostic; `repair`,
    /// `decode`: the input is cut there, exit 1).
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::default().max_input_bytes))]
    pub max_input_bytes: Size,
}

impl LimitArgs {
    /// The limits the options give.
    pub fn limits(&self) -> Limits {
        Limits {
            max_depth: self.max_depth.0,
            max_args_bytes: self.max_args_bytes.0,
            max_held_bytes: self.max_held_bytes.0,
            max_token_bytes: self.max_token_bytes.0,
            max_tag_bytes: self.max_tag_bytes.0,
            max_repairs: self.max_repairs.0,
            max_input_bytes: self.max_input_bytes.0,
        }
    }
}

/// The option that sets limit `kind` (`--max-depth`, …).
pub fn flag(kind: LimitKind) -> String {
    format!("--{}", kind.as_str().replace('_', "-"))
}

/// The input: a file, or standard input for `-` or nothing.
pub fn open_input(file: Option<&Path>) -> Result<Box<dyn Read>, Failure> {
    match file {
        None => Ok(Box::new(io::stdin().lock())),
        Some(p) if p == Path::new("-") => Ok(Box::new(io::stdin().lock())),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Ok(Box::new(f)),
            Err(e) => Err(Failure::Io(format!("cannot read {}", p.display()), e)),
        },
    }
}

/// Reads a file an option names, whole.
pub fn read_option_file(option: &str, path: &PathBuf) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("{option} {}: cannot read it: {e}", path.display())))
}

/// Size of one read of the input.
const READ: usize = 64 << 10;

/// Reads `input` as it arrives (never more than one read held) and hands
/// it to `feed` in pieces of `chunk` bytes (exactly, across reads) or as
/// read; after each read's pieces `feed` gets `None`, the time to flush,
/// so output follows input (`tail -f log | toolstream parse`). Stops after
/// `max` bytes and returns whether the input went on past them.
pub fn stream_input(
    input: &mut dyn Read,
    chunk: Option<usize>,
    max: usize,
    mut feed: impl FnMut(Option<&[u8]>) -> Result<(), Failure>,
) -> Result<bool, Failure> {
    let mut buf = vec![0u8; READ];
    let mut pending: Vec<u8> = Vec::new();
    let mut total = 0usize;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Io("cannot read input".into(), e)),
        };
        let room = max - total;
        let over = n > room;
        let data = &buf[..n.min(room)];
        total += data.len();
        match chunk {
            None => {
                if !data.is_empty() {
                    feed(Some(data))?;
                }
            }
            Some(size) => {
                let mut rest = data;
                if !pending.is_empty() {
                    let take = (size - pending.len()).min(rest.len());
                    pending.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    if pending.len() == size {
                        feed(Some(&pending))?;
                        pending.clear();
                    }
                }
                while rest.len() >= size {
                    feed(Some(&rest[..size]))?;
                    rest = &rest[size..];
                }
                pending.extend_from_slice(rest);
            }
        }
        feed(None)?;
        if over {
            if !pending.is_empty() {
                feed(Some(&pending))?;
            }
            return Ok(true);
        }
    }
    if !pending.is_empty() {
        feed(Some(&pending))?;
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_and_print_alike() {
        for (s, n) in [
            ("0", 0),
            ("4096", 4096),
            ("64KiB", 64 << 10),
            ("16M", 16 << 20),
            ("1g", 1 << 30),
            ("none", usize::MAX),
        ] {
            assert_eq!(s.parse::<Size>().unwrap(), Size(n), "{s}");
            assert_eq!(Size(n).to_string().parse::<Size>().unwrap(), Size(n));
        }
        assert_eq!(Size(16 << 20).to_string(), "16MiB");
        assert_eq!(Size(100).to_string(), "100");
        for bad in ["", "x", "12q", "-1", "99999999999999999999G"] {
            assert!(bad.parse::<Size>().is_err(), "{bad}");
        }
    }

    #[test]
    fn pieces_are_exact_across_reads() {
        // A reader that returns 5 bytes at a time.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(5).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let input: Vec<u8> = (0..23).collect();
        let mut pieces = Vec::new();
        let over = stream_input(&mut Trickle(&input), Some(3), usize::MAX, |p| {
            pieces.extend(p.map(<[u8]>::to_vec));
            Ok(())
        })
        .unwrap();
        assert!(!over);
        assert!(pieces[..pieces.len() - 1].iter().all(|p| p.len() == 3));
        assert_eq!(pieces.concat(), input);
        let mut seen = Vec::new();
        let over = stream_input(&mut Trickle(&input), None, 12, |p| {
            seen.extend_from_slice(p.unwrap_or_default());
            Ok(())
        })
        .unwrap();
        assert!(over);
        assert_eq!(seen, &input[..12]);
    }
}
