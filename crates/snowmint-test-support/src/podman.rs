//! podman for the tests that run containers (Debian's `podman` and
//! `runc`), rootful, with a containers.conf of its own under
//! `target/podman/` (`default_ulimits = []`: the defaults cannot be set in
//! every sandbox this runs in); the system's configuration is not touched.
//!
//! No image registry is reached: the base image is made with `debootstrap
//! --variant=minbase bookworm` (Debian's packages only) and `podman
//! import`, and kept under `target/podman/` so that later runs skip it;
//! images built on it are kept by podman and built once.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The base image: Debian bookworm, minbase.
pub const BASE: &str = "localhost/snowmint-test-base:bookworm";

/// podman, set up for the tests.
pub struct Podman {
    /// Where the base image's tarball, build contexts and containers.conf
    /// live.
    dir: PathBuf,
}

impl Podman {
    /// podman, checked to be there and run as root.
    ///
    /// # Panics
    ///
    /// When podman, runc or debootstrap is missing (naming the package),
    /// or the test is not root.
    pub fn new() -> Podman {
        for (tool, package) in [
            ("podman", "podman"),
            ("runc", "runc"),
            ("debootstrap", "debootstrap"),
        ] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(
                found,
                "{tool} is missing: apt-get install {package} (scripts/test installs it)"
            );
        }
        assert!(
            Command::new("id")
                .arg("-u")
                .output()
                .is_ok_and(|o| o.stdout == b"0\n"),
            "the container tests run podman as root (rootful; debootstrap needs root too): run the tests as root"
        );
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/podman");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("containers.conf"),
            "[containers]\ndefault_ulimits = []\n",
        )
        .unwrap();
        Podman { dir }
    }

    /// Where this podman keeps its files (`target/podman/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `podman` with this set-up's configuration and runtime.
    pub fn command(&self) -> Command {
        let mut command = Command::new("podman");
        command
            .env("CONTAINERS_CONF", self.dir.join("containers.conf"))
            .args(["--runtime", "runc"]);
        command
    }

    /// `podman ARGS`, which must succeed; its output.
    ///
    /// # Panics
    ///
    /// When it fails, with its standard error.
    pub fn run(&self, args: &[&str]) -> String {
        let output = self.output(args);
        assert!(
            output.status.success(),
            "podman {args:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `podman ARGS`, whatever it does.
    pub fn output(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("running podman")
    }

    /// The base image ([`BASE`]): imported from the tarball under
    /// `target/podman/`, which debootstrap makes the first time.
    pub fn base_image(&self) {
        let _lock = self.lock();
        if self.output(&["image", "exists", BASE]).status.success() {
            return;
        }
        let tarball = self.dir.join("bookworm-minbase.tar.gz");
        if !tarball.exists() {
            let rootfs = self.dir.join("rootfs");
            let _ = std::fs::remove_dir_all(&rootfs);
            let status = Command::new("debootstrap")
                .args(["--variant=minbase", "bookworm"])
                .arg(&rootfs)
                .arg("http://deb.debian.org/debian")
                .status()
                .expect("running debootstrap");
            assert!(status.success(), "debootstrap failed: {status}");
            // The packages it downloaded are no part of an image.
            let packed = Command::new("sh")
                .arg("-c")
                .arg(
                    "rm -rf \"$1\"/var/cache/apt/archives/*.deb \"$1\"/var/lib/apt/lists/* \
                     && tar -C \"$1\" -c . | gzip -1 > \"$2.part\" && mv \"$2.part\" \"$2\"",
                )
                .arg("sh")
                .arg(&rootfs)
                .arg(&tarball)
                .status()
                .unwrap();
            assert!(packed.success(), "packing the base image failed");
            std::fs::remove_dir_all(&rootfs).unwrap();
        }
        self.run(&["import", tarball.to_str().unwrap(), BASE]);
    }

    /// The image `name`, built from `containerfile` (which starts `FROM
    /// {BASE}`, say) with an empty build context and the host's network
    /// (for Debian's mirror), once: later calls find it built.
    pub fn image(&self, name: &str, containerfile: &str) {
        self.base_image();
        let _lock = self.lock();
        if self.output(&["image", "exists", name]).status.success() {
            return;
        }
        let context = self
            .dir
            .join(format!("context-{}", name.replace(['/', ':'], "-")));
        let _ = std::fs::remove_dir_all(&context);
        std::fs::create_dir_all(&context).unwrap();
        std::fs::write(context.join("Containerfile"), containerfile).unwrap();
        self.run(&[
            "build",
            "--network",
            "host",
            "-t",
            name,
            context.to_str().unwrap(),
        ]);
    }

    /// The lock that keeps two test processes from making the same image
    /// at once.
    fn lock(&self) -> File {
        let lock = File::create(self.dir.join("base.lock")).unwrap();
        lock.lock().unwrap();
        lock
    }
}

impl Default for Podman {
    fn default() -> Podman {
        Podman::new()
    }
}
