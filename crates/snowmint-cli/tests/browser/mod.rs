//! A real browser on a real service, for the page's tests.
//!
//! [`Browser::open`] starts `snowmint serve` on a free loopback port,
//! chromedriver on another, and a headless Chromium session through it
//! (fantoccini speaks WebDriver). [`Browser::open_export`] starts no node:
//! it writes the page with `snowmint page --export` and opens it from disk
//! (`file://`). Every process is stopped when the
//! [`Browser`] is dropped, also when a test fails halfway: chromedriver and
//! the Chromium it started share a process group that is killed as a whole.
//!
//! Chromium and chromedriver are Debian's `chromium` and `chromium-driver`
//! (`scripts/test` installs them). Without them the tests fail and say so.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use snowmint_test_support::binary::Service;
use snowmint_test_support::net::{free_port, wait_for_port};
use snowmint_test_support::temp::{TempDir, temp_dir};
use snowmint_test_support::wait::Deadline;

/// How long anything the tests wait for may take before the test fails.
/// Generous: the machine may be busy; this bounds a hang, it times nothing.
const PATIENCE: Duration = Duration::from_secs(30);

/// The node the service runs as.
pub const DATACENTER: u64 = 3;
pub const MACHINE: u64 = 7;

const INSTALL_HINT: &str =
    "install chromium and chromium-driver (apt-get install chromium chromium-driver)";

/// What the browser is set up with.
#[derive(Debug, Clone)]
pub struct Options {
    /// The browser's preferred languages (`Accept-Language` and
    /// `navigator.languages`).
    pub languages: &'static str,
    /// The time zone the browser lives in.
    pub time_zone: &'static str,
    /// Width and height of the window.
    pub window: (u32, u32),
    /// Whether the service requires bearer tokens (`--auth-token-file`,
    /// scope `issue`), which the page does not send.
    pub tokens: bool,
    /// The node's `--layout` (default: Twitter's).
    pub layout: Option<&'static str>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            languages: "en-US,en",
            time_zone: "Europe/Madrid",
            window: (1280, 900),
            tokens: false,
            layout: None,
        }
    }
}

/// A headless Chromium session on the page of a running `snowmint serve`.
pub struct Browser {
    pub client: Client,
    /// `http://127.0.0.1:PORT`, the service; or `file:///DIR`, the
    /// exported page's directory. The page is at `{base}/` or
    /// `{base}/index.html`.
    pub base: String,
    name: String,
    // Dropped in this order: the browser, then the service.
    driver: Process,
    _profile: TempDir,
    _service: Option<Service>,
    _home: TempDir,
}

impl Browser {
    /// Starts the service, chromedriver and a browser session, and opens
    /// the page. `name` names the test's screenshots.
    pub async fn open(name: &str, options: Options) -> Browser {
        let home = temp_dir(&format!("page-{name}"));
        let state_dir = home.path().join("state").display().to_string();
        let tokens = home.path().join("tokens");
        std::fs::write(&tokens, "page-test-token-0123456789\n").unwrap();
        let tokens = tokens.display().to_string();
        let datacenter = DATACENTER.to_string();
        let machine = MACHINE.to_string();
        let mut args = vec![
            "--state-dir",
            &state_dir,
            "--datacenter",
            &datacenter,
            "--machine",
            &machine,
        ];
        if options.tokens {
            args.extend(["--auth-token-file", &tokens]);
        }
        if let Some(layout) = options.layout {
            args.extend(["--layout", layout]);
        }
        let service = Service::start(env!("CARGO_BIN_EXE_snowmint"), home.path(), &args, &[]);
        let base = format!("http://{}", service.address);
        let browser = Browser::start(name, &options, base, Some(service), home).await;
        browser
            .client
            .goto(&format!("{}/", browser.base))
            .await
            .expect("opening the page");
        browser
            .wait_until(
                "the layout facts to load",
                "return document.getElementById('facts-epoch').textContent !== ''",
            )
            .await;
        browser
    }

    /// Writes the page with `snowmint page --export DIR` and opens
    /// `DIR/index.html` from disk: no node runs.
    pub async fn open_export(name: &str, options: Options) -> Browser {
        let home = temp_dir(&format!("page-{name}"));
        let dir = home.path().join("page");
        let out = Command::new(env!("CARGO_BIN_EXE_snowmint"))
            .arg("page")
            .arg("--export")
            .arg(&dir)
            .output()
            .expect("running snowmint page --export");
        assert!(
            out.status.success(),
            "snowmint page --export: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let base = format!("file://{}", dir.display());
        let browser = Browser::start(name, &options, base, None, home).await;
        browser
            .client
            .goto(&format!("{}/index.html", browser.base))
            .await
            .expect("opening the page");
        browser
            .wait_until(
                "the layout facts to load",
                "return document.getElementById('facts-epoch').textContent !== ''",
            )
            .await;
        browser
    }

    /// Starts chromedriver and a browser session on nothing yet.
    async fn start(
        name: &str,
        options: &Options,
        base: String,
        service: Option<Service>,
        home: TempDir,
    ) -> Browser {
        let chromium = find_program(&["/usr/bin/chromium", "chromium"]);
        let chromedriver = find_program(&["/usr/bin/chromedriver", "chromedriver"]);
        let profile = temp_dir(&format!("page-{name}-chromium"));
        let port = free_port();
        let mut command = Command::new(&chromedriver);
        command
            .arg(format!("--port={port}"))
            .env("TZ", options.time_zone)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group, so that Chromium goes down with it.
            .process_group(0);
        let driver = Process::spawn("chromedriver", &mut command);
        wait_for_port(driver.name, port, PATIENCE);

        let (width, height) = options.window;
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-extensions",
                    "--disable-breakpad",
                    "--disable-crash-reporter",
                    "--no-first-run",
                    "--disable-quic",
                    "--hide-scrollbars",
                    format!("--lang={}", options.languages.split(',').next().unwrap_or("en")),
                    format!("--user-data-dir={}", profile.path().display()),
                    format!("--window-size={width},{height}"),
                ],
                "prefs": { "intl.accept_languages": options.languages },
            },
        });
        let capabilities = capabilities.as_object().cloned().expect("an object");
        let client = ClientBuilder::rustls()
            .expect("TLS setup of the WebDriver client")
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|e| {
                panic!("starting a Chromium session through chromedriver: {e}; {INSTALL_HINT}")
            });
        Browser {
            client,
            base,
            name: name.to_owned(),
            driver,
            _profile: profile,
            _service: service,
            _home: home,
        }
    }

    /// Ends the session cleanly (Chromium quits), then stops the processes.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    pub async fn find(&self, css: &str) -> Element {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element {css} on the page: {e}"))
    }

    /// Replaces what an input holds by typing `text` into it.
    pub async fn fill(&self, css: &str, text: &str) {
        let input = self.find(css).await;
        input.clear().await.expect("clearing an input");
        input.send_keys(text).await.expect("typing");
    }

    /// Picks the option with `value` of a `<select>`, as a click would.
    pub async fn choose(&self, css: &str, value: &str) {
        self.find(css)
            .await
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("choosing {value} in {css}: {e}"));
    }

    pub async fn click(&self, css: &str) {
        self.find(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("clicking {css}: {e}"));
    }

    /// The text of an element as shown (empty if it is hidden).
    ///
    /// The page re-renders what it shows as answers arrive, so the element
    /// found may be replaced before its text is read (a stale reference):
    /// then it is found again, as a person looking again would.
    pub async fn text(&self, css: &str) -> String {
        for _ in 0..20 {
            match self.find(css).await.text().await {
                Ok(text) => return text,
                Err(fantoccini::error::CmdError::Standard(e))
                    if e.error == fantoccini::error::ErrorStatus::StaleElementReference =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("reading the text of {css}: {e}"),
            }
        }
        panic!("{css} was replaced 20 times in a row while its text was read")
    }

    pub async fn attr(&self, css: &str, name: &str) -> Option<String> {
        self.find(css)
            .await
            .attr(name)
            .await
            .expect("reading an attribute")
    }

    /// Runs `script` (a function body that returns something) in the page.
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("running {script:?}: {e}"))
    }

    /// Waits until `css` shows exactly `expected`; fails with what it shows
    /// if that does not happen.
    pub async fn wait_text(&self, css: &str, expected: &str) {
        let deadline = Deadline::after(PATIENCE, format!("{css} to show {expected:?}"));
        let shown = loop {
            let shown = self.text(css).await;
            if shown == expected {
                return;
            }
            if deadline.passed() {
                break shown;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        };
        self.screenshot(&format!("{}-failed", css.trim_start_matches('#')))
            .await;
        deadline.fail(&format!("{css} shows {shown:?}"));
    }

    /// Waits until `script` returns true.
    pub async fn wait_until(&self, what: &str, script: &str) {
        let deadline = Deadline::after(PATIENCE, what);
        while !deadline.passed() {
            if self.js(script).await == Value::Bool(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        self.screenshot("wait-failed").await;
        deadline.fail("");
    }

    /// Saves what the window shows as `target/screenshots/<test>-<what>.png`.
    pub async fn screenshot(&self, what: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("taking a screenshot");
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).expect("creating the screenshot directory");
        let path = dir.join(format!("{}-{what}.png", self.name));
        std::fs::write(&path, png).expect("saving a screenshot");
        path
    }

    /// Resizes the window to `width` and the page's full height, so that a
    /// screenshot shows all of it.
    pub async fn fit_height(&self, width: u32) {
        self.client
            .set_window_rect(0, 0, width, 900)
            .await
            .expect("resizing");
        // The window is taller than the viewport by the browser's own frame.
        let sizes = self
            .js("return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]")
            .await;
        let size = |i: usize| sizes[i].as_u64().expect("a page size") as u32;
        self.client
            .set_window_rect(0, 0, width, size(0) + size(1))
            .await
            .expect("resizing");
        self.js("window.scrollTo(0, 0); return true").await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.driver.kill_group();
    }
}

/// A child process, killed when dropped.
struct Process {
    name: &'static str,
    child: Child,
}

impl Process {
    fn spawn(name: &'static str, command: &mut Command) -> Process {
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}; {INSTALL_HINT}"));
        Process { name, child }
    }

    /// Kills the process and every process of its group (it must lead one).
    fn kill_group(&mut self) {
        // The shell's built-in `kill`: no procps needed, and no unsafe code.
        let _ = Command::new("sh")
            .args(["-c", &format!("kill -KILL -{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where screenshots go: `screenshots/` in the target directory.
pub fn screenshot_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("screenshots")
}

/// The first of `candidates` that exists (absolute) or is on `PATH`.
fn find_program(candidates: &[&str]) -> PathBuf {
    for candidate in candidates {
        let path = Path::new(candidate);
        if path.is_absolute() {
            if path.exists() {
                return path.to_owned();
            }
            continue;
        }
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
            .map(|dir| dir.join(candidate))
            .find(|path| path.exists());
        if let Some(path) = on_path {
            return path;
        }
    }
    panic!(
        "{} not found; {INSTALL_HINT}",
        candidates.last().unwrap_or(&"program")
    );
}
