//! What `scripts/dist` makes, as a user gets it: the archive unpacked in a
//! directory of its own (its SHA256SUMS, `--version`, every manual page
//! read by `man -l` and agreeing with `--help`, a completion script for
//! every shell the binary supports, `serve --check` from there), and the
//! Debian package read by `dpkg-deb`, then installed, used and purged in a
//! container of Debian bookworm (podman, as the image test runs it).
//!
//! The package is made from the binary under test (`scripts/dist --binary
//! ... --fast`): everything but the build of the `dist` profile, which
//! bench/dist.sh measures, and the compression level is what a release
//! does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use snowmint_test_support::podman::{BASE, Podman};
use snowmint_test_support::temp::{TempDir, temp_dir};

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An image of the base with `man` installed (minbase has none).
const MAN_IMAGE: &str = "localhost/snowmint-test-man:bookworm";

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What `scripts/dist` made, once for every test of this file.
struct Made {
    dir: TempDir,
    archive: String,
    package: String,
}

fn made() -> &'static Made {
    static MADE: OnceLock<Made> = OnceLock::new();
    MADE.get_or_init(|| {
        let dir = temp_dir("dist");
        let output = Command::new(repository().join("scripts/dist"))
            .args(["--binary", SNOWMINT, "--fast", "--out"])
            .arg(dir.path())
            .output()
            .expect("running scripts/dist");
        assert!(
            output.status.success(),
            "scripts/dist failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let target = String::from_utf8(
            Command::new("rustc")
                .arg("-vV")
                .output()
                .expect("rustc -vV")
                .stdout,
        )
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .unwrap();
        let arch = text(&run(Command::new("dpkg").arg("--print-architecture")));
        Made {
            archive: format!("snowmint-{VERSION}-{target}"),
            package: format!("snowmint_{VERSION}-1_{}.deb", arch.trim()),
            dir,
        }
    })
}

/// Runs `command`, which must succeed; its output.
fn run(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        text(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The commands `snowmint --help` lists (but `help`).
fn commands() -> Vec<String> {
    let help = text(&run(Command::new(SNOWMINT).arg("--help")));
    let commands: Vec<String> = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(commands.len() >= 8, "no commands in --help:\n{help}");
    commands
}

/// The shells `snowmint completions` takes, as its error lists them.
fn shells() -> Vec<String> {
    let output = Command::new(SNOWMINT)
        .args(["completions", "no-such-shell"])
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    let list = error
        .split_once("[possible values: ")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .unwrap_or_else(|| panic!("no possible values in:\n{error}"));
    list.split(", ").map(str::to_owned).collect()
}

/// The file a completion script for `shell` is shipped as, in the archive.
fn completion_file(shell: &str) -> String {
    match shell {
        "bash" => "complete/snowmint.bash".into(),
        "zsh" => "complete/_snowmint".into(),
        "fish" => "complete/snowmint.fish".into(),
        "elvish" => "complete/snowmint.elv".into(),
        "powershell" => "complete/_snowmint.ps1".into(),
        other => {
            panic!("scripts/dist makes no completion file for {other}: add one there and here")
        }
    }
}

/// Every file under `dir`, as paths relative to it.
fn files(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.insert(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found
}

/// The long options a `--help` text lists (`--state-dir`).
fn long_options(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line.strip_prefix('-').filter(|_| line.len() > 2)?;
            let at = line.find("--")?;
            let name: String = line[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (name.len() > 2).then_some(name)
        })
        .collect()
}

/// The archive holds the binary, a manual page per command, a completion
/// script per shell, the licenses, README, changelog, guides and deploy/,
/// each file checked by its SHA256SUMS; the binary runs from where it is
/// unpacked, and each page reads with `man -l` and names what `--help`
/// names.
#[test]
fn the_archive_unpacks_checks_and_runs() {
    let made = made();
    // The sums beside the archive and the package.
    run(Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(made.dir.path()));
    let unpacked = temp_dir("dist-unpacked");
    run(Command::new("tar")
        .arg("-xzf")
        .arg(made.dir.path().join(format!("{}.tar.gz", made.archive)))
        .arg("-C")
        .arg(unpacked.path()));
    let top = unpacked.path().join(&made.archive);
    run(Command::new("sha256sum")
        .args(["--check", "--strict", "--quiet", "SHA256SUMS"])
        .current_dir(&top));

    let mut expected: BTreeSet<String> = [
        "snowmint",
        "SHA256SUMS",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "README.md",
        "CHANGELOG.md",
        "man/man1/snowmint.1",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for command in commands() {
        expected.insert(format!("man/man1/snowmint-{command}.1"));
    }
    let shells = shells();
    assert!(shells.len() >= 5, "{shells:?}");
    for shell in &shells {
        expected.insert(completion_file(shell));
    }
    for dir in ["deploy", "docs"] {
        for file in files(&repository().join(dir)) {
            if dir == "deploy" || file.ends_with(".md") || file.ends_with(".png") {
                expected.insert(format!("{dir}/{file}"));
            }
        }
    }
    assert_eq!(files(&top), expected, "what the archive holds");
    // The SHA256SUMS inside names every other file.
    let sums = std::fs::read_to_string(top.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), expected.len() - 1);

    let binary = top.join("snowmint");
    let version = text(&run(Command::new(&binary).arg("--version")));
    assert_eq!(version.trim(), format!("snowmint {VERSION}"));

    // Each page reads, and names every long option its command's --help
    // names: both are made from the same definitions.
    for command in std::iter::once(None).chain(commands().into_iter().map(Some)) {
        let page = match &command {
            None => top.join("man/man1/snowmint.1"),
            Some(name) => top.join(format!("man/man1/snowmint-{name}.1")),
        };
        let shown = text(&run(Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .env("LC_ALL", "C.UTF-8")));
        let title = match &command {
            None => "snowmint".to_owned(),
            Some(name) => format!("snowmint-{name}"),
        };
        assert!(
            shown.contains(&format!("{title} - ")),
            "{}: no NAME line for {title}:\n{shown}",
            page.display()
        );
        let help = text(&run(Command::new(&binary)
            .args(command.as_slice())
            .arg("--help")
            .env("COLUMNS", "100")));
        for option in long_options(&help) {
            assert!(
                shown.contains(&option),
                "{} does not name {option}, which `--help` does",
                page.display()
            );
        }
    }

    // The node's settings check, from the unpacked binary.
    let state = temp_dir("dist-state");
    let checked = run(Command::new(&binary)
        .args(["serve", "--check", "--datacenter", "3", "--machine", "7"])
        .args(["--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state.path().join("state"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin"));
    let said = text(&checked);
    assert!(said.contains("static: slot 103"), "{said}");
    assert!(said.lines().last().unwrap().starts_with("ok: "), "{said}");
}

/// `dpkg-deb --info` and `--contents` show what the package is made of:
/// the binary, a manual page per command, completions where bash, zsh and
/// fish look for them, deploy/'s systemd unit run from /usr/bin, the
/// example settings as a conffile with no identity set, and the docs.
#[test]
fn the_debian_package_holds_what_it_says() {
    let made = made();
    let package = made.dir.path().join(&made.package);
    let info = text(&run(Command::new("dpkg-deb").arg("--info").arg(&package)));
    for field in [
        "Package: snowmint".to_owned(),
        format!("Version: {VERSION}-1"),
        "Section: net".to_owned(),
    ] {
        assert!(info.contains(&field), "no {field:?} in:\n{info}");
    }
    let depends = info
        .lines()
        .find_map(|line| line.trim().strip_prefix("Depends: "))
        .expect("a Depends field");
    assert!(depends.contains("libc6 (>= "), "{depends}");
    assert!(
        depends.contains("passwd"),
        "useradd comes from passwd: {depends}"
    );
    for script in ["postinst", "prerm", "postrm", "conffiles", "md5sums"] {
        assert!(info.contains(script), "no {script} in:\n{info}");
    }

    let listing = text(&run(Command::new("dpkg-deb")
        .arg("--contents")
        .arg(&package)));
    let files: BTreeSet<String> = listing
        .lines()
        .filter(|line| !line.starts_with('d'))
        .filter_map(|line| line.split_whitespace().last())
        .map(|path| path.trim_start_matches('.').to_owned())
        .collect();
    let mut expected: BTreeSet<String> = [
        "/usr/bin/snowmint",
        "/usr/share/man/man1/snowmint.1.gz",
        "/usr/share/bash-completion/completions/snowmint",
        "/usr/share/zsh/vendor-completions/_snowmint",
        "/usr/share/fish/vendor_completions.d/snowmint.fish",
        "/usr/lib/systemd/system/snowmint.service",
        "/etc/snowmint/env",
        "/usr/share/doc/snowmint/copyright",
        "/usr/share/doc/snowmint/changelog.gz",
        "/usr/share/doc/snowmint/README.md.gz",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for command in commands() {
        expected.insert(format!("/usr/share/man/man1/snowmint-{command}.1.gz"));
    }
    assert_eq!(files, expected, "what the package holds");
    let env_line = listing
        .lines()
        .find(|line| line.ends_with("/etc/snowmint/env"))
        .unwrap();
    assert!(env_line.starts_with("-rw------- root/root"), "{env_line}");

    let unpacked = temp_dir("dist-deb");
    run(Command::new("dpkg-deb")
        .arg("--raw-extract")
        .arg(&package)
        .arg(unpacked.path()));
    let read = |path: &str| std::fs::read_to_string(unpacked.path().join(path)).unwrap();
    assert_eq!(read("DEBIAN/conffiles"), "/etc/snowmint/env\n");
    let unit = read("usr/lib/systemd/system/snowmint.service");
    assert!(
        unit.lines()
            .any(|line| line.starts_with("ExecStart=/usr/bin/snowmint serve")),
        "the unit does not run /usr/bin/snowmint:\n{unit}"
    );
    assert!(unit.contains("EnvironmentFile=/etc/snowmint/env"), "{unit}");
    // No two hosts that install the package share an identity.
    let env = read("etc/snowmint/env");
    for setting in ["SNOWMINT_DATACENTER=", "SNOWMINT_MACHINE="] {
        assert!(
            !env.lines().any(|line| line.starts_with(setting)),
            "the packaged settings give every host {setting}:\n{env}"
        );
    }
}

/// A container that is removed when dropped.
struct Container<'a> {
    podman: &'a Podman,
    name: String,
}

impl Container<'_> {
    /// `sh -c SCRIPT` in the container, with `env` set.
    fn sh(&self, script: &str, env: &[&str]) -> Output {
        let mut args = vec!["exec"];
        for pair in env {
            args.extend(["--env", pair]);
        }
        args.extend([self.name.as_str(), "sh", "-c", script]);
        self.podman.output(&args)
    }

    /// [`sh`](Self::sh), which must succeed; its standard output.
    fn ok(&self, script: &str) -> String {
        let output = self.sh(script, &[]);
        assert!(
            output.status.success(),
            "`{script}` failed in the container ({}):\n{}{}",
            output.status,
            text(&output),
            String::from_utf8_lossy(&output.stderr)
        );
        text(&output)
    }
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        let _ = self.podman.output(&["rm", "-f", &self.name]);
    }
}

/// The package installs on Debian bookworm: the binary runs, `man`
/// finds its pages, the `snowmint` system user exists, the packaged
/// settings are checked by `serve --check` (refused while they give no
/// identity, then accepted), and purging removes the package and its
/// configuration but keeps the state directory, unless asked.
#[test]
fn the_debian_package_installs_and_purges_in_a_container() {
    let made = made();
    let podman = Podman::new();
    podman.image(
        MAN_IMAGE,
        &format!(
            "FROM {BASE}\n\
             RUN apt-get update && apt-get install -y --no-install-recommends man-db \
             && rm -rf /var/lib/apt/lists/*\n"
        ),
    );
    let container = Container {
        podman: &podman,
        name: format!("snowmint-deb-{}", std::process::id()),
    };
    let _ = podman.output(&["rm", "-f", &container.name]);
    podman.run(&[
        "run",
        "-d",
        "--name",
        &container.name,
        "--network",
        "none",
        "-v",
        &format!("{}:/dist:ro", made.dir.path().display()),
        MAN_IMAGE,
        "sleep",
        "infinity",
    ]);
    let install = format!("dpkg -i /dist/{}", made.package);
    container.ok(&install);

    assert_eq!(
        container.ok("snowmint --version").trim(),
        format!("snowmint {VERSION}")
    );
    let page = container.ok("MANPAGER=cat man snowmint");
    assert!(page.contains("snowmint - "), "{page}");
    let page = container.ok("MANPAGER=cat man snowmint-serve");
    assert!(page.contains("--state-dir"), "{page}");
    let user = container.ok("getent passwd snowmint");
    let fields: Vec<&str> = user.trim().split(':').collect();
    assert_eq!(fields[5], "/var/lib/snowmint", "{user}");
    assert_eq!(fields[6], "/usr/sbin/nologin", "{user}");
    let uid: u32 = fields[2].parse().unwrap();
    assert!(uid < 1000, "not a system user: {user}");

    // The packaged settings, as the unit reads them.
    let check = "set -a; . /etc/snowmint/env; set +a; \
                 snowmint serve --check --state-dir /var/lib/snowmint";
    let refused = container.sh(check, &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("no node identity"), "{said}");
    container.ok(
        "sed -i 's/^#SNOWMINT_DATACENTER=.*/SNOWMINT_DATACENTER=3/; \
         s/^#SNOWMINT_MACHINE=.*/SNOWMINT_MACHINE=7/' /etc/snowmint/env",
    );
    let checked = container.ok(check);
    assert!(checked.contains("static: slot 103"), "{checked}");
    assert!(
        checked.lines().last().unwrap().starts_with("ok: "),
        "{checked}"
    );

    // A node's high-water mark in the state directory, as a run leaves it.
    container.ok(
        "snowmint generate --datacenter 3 --machine 7 --state-dir /var/lib/snowmint >/dev/null \
         && test -f /var/lib/snowmint/node-dc3-m7.mark",
    );
    let purged = container.sh("dpkg --purge snowmint", &[]);
    assert!(purged.status.success(), "{}", text(&purged));
    let said = String::from_utf8_lossy(&purged.stderr);
    assert!(
        said.contains("kept the state directory /var/lib/snowmint"),
        "{said}"
    );
    let left = container.ok(
        "for f in /usr/bin/snowmint /etc/snowmint /usr/lib/systemd/system/snowmint.service \
         /usr/share/man/man1/snowmint.1.gz /var/lib/snowmint/node-dc3-m7.mark; do \
         test -e $f && echo $f; done; true",
    );
    assert_eq!(
        left.trim(),
        "/var/lib/snowmint/node-dc3-m7.mark",
        "left after purge"
    );

    // Asked, purging removes the state directory too.
    container.ok(&install);
    let purged = container.sh("dpkg --purge snowmint", &["SNOWMINT_PURGE_STATE=yes"]);
    assert!(purged.status.success(), "{}", text(&purged));
    container.ok("test ! -e /var/lib/snowmint && test ! -e /etc/snowmint");
}
