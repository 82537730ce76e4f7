//! The deployment files under `deploy/` say what the binary does: every
//! container of the Kubernetes manifests (read with a real YAML parser,
//! PyYAML) and the systemd unit's `ExecStart` go through the real
//! `snowmint serve --check` with their arguments and environment, and
//! start as the node they mean to be; their ports, probes, volumes and
//! Services agree with what the check says the node listens on and keeps.
//! A copy of a file broken on purpose fails the same checks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use snowmint_test_support::python::python;
use snowmint_test_support::temp::temp_dir;

const SNOWMINT: &str = env!("CARGO_BIN_EXE_snowmint");

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// The documents of a YAML file, as PyYAML reads them (`safe_load_all`).
fn yaml_documents(path: &Path) -> Result<Vec<Value>, String> {
    let output = Command::new(python())
        .args([
            "-c",
            "import json, sys, yaml\n\
             print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))",
        ])
        .arg(path)
        .output()
        .expect("running python");
    if !output.status.success() {
        return Err(format!(
            "{} is not YAML: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())
}

/// What `snowmint serve --check ARGS` said, with only `env` in the
/// environment: its exit code and output.
fn serve_check(args: &[String], env: &BTreeMap<String, String>) -> (Option<i32>, String) {
    let home = temp_dir("deploy-check");
    let mut command = Command::new(SNOWMINT);
    command
        .arg("serve")
        .arg("--check")
        // The manifests name hosts of their own cluster: the check reads
        // them offline.
        .arg("--offline")
        .args(args)
        .env_clear()
        .env("HOME", home.path())
        .envs(env)
        .stdin(Stdio::null());
    let output = command.output().expect("running snowmint serve --check");
    (
        output.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// The value of line `name` of a check's output (`listen       http://...`).
fn line<'a>(output: &'a str, name: &str) -> Option<&'a str> {
    output
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name:<12} ")))
}

/// The port of `http://IP:PORT ...` or `IP:PORT ...` in a check's line.
fn port_of(text: &str) -> Option<u64> {
    let address = text.trim_start_matches("http://").split(' ').next()?;
    address.rsplit_once(':')?.1.parse().ok()
}

fn s(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Checks every workload of a manifest file; returns the identity source
/// of each container checked (`hostname`, `etcd`, ...), or what is wrong.
fn check_manifest(path: &Path) -> Result<Vec<String>, String> {
    let documents = yaml_documents(path)?;
    let of_kind = |kind: &str| {
        documents
            .iter()
            .filter(|d| d["kind"] == kind)
            .collect::<Vec<_>>()
    };
    let secrets = of_kind("Secret");
    let services = of_kind("Service");
    let budgets = of_kind("PodDisruptionBudget");
    let policies = of_kind("NetworkPolicy");
    let mut sources = Vec::new();
    let workloads: Vec<&Value> = documents
        .iter()
        .filter(|d| d["kind"] == "StatefulSet" || d["kind"] == "Deployment")
        .collect();
    if workloads.is_empty() {
        return Err(format!("{}: no StatefulSet or Deployment", path.display()));
    }
    for workload in workloads {
        let kind = s(&workload["kind"]);
        let name = s(&workload["metadata"]["name"]);
        let spec = &workload["spec"];
        let labels = &spec["template"]["metadata"]["labels"];
        if spec["selector"]["matchLabels"] != *labels {
            return Err(format!(
                "{kind} {name}: its selector is not its pods' labels"
            ));
        }
        let replicas = spec["replicas"].as_u64().ok_or("no replicas")?;
        let pod = &spec["template"]["spec"];
        for container in pod["containers"].as_array().ok_or("no containers")? {
            let args: Vec<String> = container["args"]
                .as_array()
                .map(|a| a.iter().map(|v| s(v).to_owned()).collect())
                .unwrap_or_default();
            let mut env = BTreeMap::new();
            for var in container["env"].as_array().into_iter().flatten() {
                let var_name = s(&var["name"]).to_owned();
                let value = if let Some(value) = var["value"].as_str() {
                    value.to_owned()
                } else if let Some(secret) = var["valueFrom"].get("secretKeyRef") {
                    let found = secrets
                        .iter()
                        .find(|d| d["metadata"]["name"] == secret["name"])
                        .and_then(|d| d["stringData"][s(&secret["key"])].as_str());
                    match found {
                        Some(value) => value.to_owned(),
                        None if secret["optional"] == true => continue,
                        None => {
                            return Err(format!(
                                "{kind} {name}: {var_name} names key {} of Secret {}, which is not in the file",
                                secret["key"], secret["name"]
                            ));
                        }
                    }
                } else {
                    return Err(format!("{kind} {name}: {var_name} has no value"));
                };
                env.insert(var_name, value);
            }
            let written_in = container["env"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| v["name"] == "SNOWMINT_COORDINATOR" && v["valueFrom"].is_null());
            if written_in || args.iter().any(|a| a.starts_with("--coordinator")) {
                return Err(format!(
                    "{kind} {name}: the coordinator's URL is written in the manifest, not taken from a Secret"
                ));
            }
            // A StatefulSet's pods are named NAME-ORDINAL, and that is
            // their hostname: the first and the last pod are checked.
            let hostnames: Vec<Option<String>> = if kind == "StatefulSet" {
                vec![
                    Some(format!("{name}-0")),
                    Some(format!("{name}-{}", replicas - 1)),
                ]
            } else {
                vec![None]
            };
            // The Secrets mounted as files (TLS, tokens, the etcd CA) are
            // made here, as the cluster would mount them, and the paths
            // the node is given point at them.
            let fixtures = temp_dir("deploy-secrets");
            let mounted = secret_files(pod, container, fixtures.path())?;
            let local = |text: &str| {
                mounted.iter().fold(text.to_owned(), |text, (mount, dir)| {
                    text.replace(mount.as_str(), dir.to_str().unwrap())
                })
            };
            let args: Vec<String> = args.iter().map(|a| local(a)).collect();
            let env: BTreeMap<String, String> =
                env.iter().map(|(k, v)| (k.clone(), local(v))).collect();
            for hostname in hostnames {
                let mut env = env.clone();
                if let Some(hostname) = &hostname {
                    env.insert("SNOWMINT_HOSTNAME".into(), hostname.clone());
                }
                let (code, output) = serve_check(&args, &env);
                if code != Some(0) {
                    return Err(format!(
                        "{kind} {name} ({hostname:?}): snowmint serve --check exits {code:?}:\n{output}"
                    ));
                }
                let identity = line(&output, "identity").ok_or("no identity line")?;
                let source = identity.split(':').next().unwrap().to_owned();
                if output.contains("is loopback") {
                    return Err(format!(
                        "{kind} {name}: a listener on loopback is unreachable from other pods:\n{output}"
                    ));
                }
                for secret in &secrets {
                    for value in secret["stringData"].as_object().into_iter().flatten() {
                        let value = s(value.1);
                        if value.len() > 4 && !value.contains("://") && output.contains(value) {
                            return Err(format!("{kind} {name}: the check shows a secret"));
                        }
                    }
                }
                check_pod(
                    kind,
                    name,
                    (pod, &spec["volumeClaimTemplates"]),
                    container,
                    &output,
                )?;
                if let Some(slots) = line(&output, "coordinator").and_then(|l| {
                    l.split(" of them)")
                        .next()?
                        .rsplit('(')
                        .next()?
                        .parse::<u64>()
                        .ok()
                }) && replicas > slots
                {
                    return Err(format!(
                        "{kind} {name}: {replicas} replicas for {slots} slots: some would never hold one"
                    ));
                }
                sources.push(source);
            }
        }
        check_services(kind, name, labels, pod, &services)?;
        check_network_policy(kind, name, labels, pod, &policies)?;
        if kind == "StatefulSet" {
            let governing = services
                .iter()
                .find(|d| d["metadata"]["name"] == spec["serviceName"])
                .ok_or(format!(
                    "{kind} {name}: its serviceName is no Service of the file"
                ))?;
            if governing["spec"]["clusterIP"] != "None" {
                return Err(format!(
                    "{kind} {name}: its governing Service is not headless"
                ));
            }
            if !budgets
                .iter()
                .any(|b| b["spec"]["selector"]["matchLabels"] == *labels)
            {
                return Err(format!(
                    "{kind} {name}: no PodDisruptionBudget selects its pods"
                ));
            }
        }
    }
    Ok(sources)
}

/// Makes the files of each Secret volume the container mounts under
/// `dir`, as the cluster would (a certificate and key of a test CA for
/// `tls.crt` and `tls.key`, the CA for `ca.crt`, a token for anything
/// else); returns each mount path with the directory standing for it.
fn secret_files(
    pod: &Value,
    container: &Value,
    dir: &Path,
) -> Result<Vec<(String, PathBuf)>, String> {
    let ca = snowmint_test_support::tls::TestCa::new("deploy");
    let server = ca.server("snowmint");
    let mut mounted = Vec::new();
    for mount in container["volumeMounts"].as_array().into_iter().flatten() {
        let volume = pod["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == mount["name"]);
        let Some(secret) = volume.map(|v| &v["secret"]).filter(|s| s.is_object()) else {
            continue;
        };
        if mount["readOnly"] != true || secret["secretName"].as_str().is_none() {
            return Err(format!(
                "the Secret volume {} is not mounted read-only",
                mount["name"]
            ));
        }
        let local = dir.join(s(&mount["name"]));
        std::fs::create_dir_all(&local).unwrap();
        for (file, text) in [
            ("tls.crt", server.cert_pem.clone()),
            ("tls.key", server.key_pem.clone()),
            ("ca.crt", ca.pem().to_owned()),
            ("tokens", "deploy-token-0123456789abcdef\n".to_owned()),
        ] {
            let path = local.join(file);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o400))
                .unwrap();
        }
        mounted.push((s(&mount["mountPath"]).to_owned(), local));
    }
    Ok(mounted)
}

/// The NetworkPolicy of the file admits only labelled pods, on the
/// workload's named ports (checked without kubectl: the fields a cluster
/// reads, and that they name what exists).
fn check_network_policy(
    kind: &str,
    name: &str,
    labels: &Value,
    pod: &Value,
    policies: &[&Value],
) -> Result<(), String> {
    let policy = policies
        .iter()
        .find(|p| p["spec"]["podSelector"]["matchLabels"] == *labels)
        .ok_or(format!("{kind} {name}: no NetworkPolicy selects its pods"))?;
    if policy["apiVersion"] != "networking.k8s.io/v1" {
        return Err(format!(
            "{kind} {name}: the NetworkPolicy is not networking.k8s.io/v1"
        ));
    }
    if !policy["spec"]["policyTypes"]
        .as_array()
        .is_some_and(|types| types.iter().any(|t| t == "Ingress"))
    {
        return Err(format!(
            "{kind} {name}: the NetworkPolicy does not restrict ingress"
        ));
    }
    let ports: Vec<&str> = pod["containers"][0]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| s(&p["name"]))
        .collect();
    for rule in policy["spec"]["ingress"]
        .as_array()
        .ok_or("no ingress rules")?
    {
        let from = rule["from"]
            .as_array()
            .filter(|f| !f.is_empty())
            .ok_or(format!(
                "{kind} {name}: an ingress rule admits every source"
            ))?;
        for source in from {
            let selected = source["podSelector"]["matchLabels"].as_object();
            if selected.is_none_or(|l| l.is_empty()) || source.get("ipBlock").is_some() {
                return Err(format!(
                    "{kind} {name}: an ingress source is not a labelled pod: {source}"
                ));
            }
        }
        for port in rule["ports"].as_array().into_iter().flatten() {
            if !ports.contains(&s(&port["port"])) {
                return Err(format!(
                    "{kind} {name}: the NetworkPolicy names port {}, which the pods do not have",
                    port["port"]
                ));
            }
        }
    }
    Ok(())
}

/// The pod's ports, probes and volumes agree with what the check says.
fn check_pod(
    kind: &str,
    name: &str,
    (pod, claims): (&Value, &Value),
    container: &Value,
    output: &str,
) -> Result<(), String> {
    let port_named = |wanted: &str| {
        container["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == wanted)
            .and_then(|p| p["containerPort"].as_u64())
    };
    for (port_name, check_line) in [("http", "listen"), ("grpc", "grpc")] {
        let listens = line(output, check_line).and_then(port_of);
        if port_named(port_name) != listens {
            return Err(format!(
                "{kind} {name}: container port {port_name} is {:?}, but the node listens on {listens:?}",
                port_named(port_name)
            ));
        }
    }
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        let get = &container[probe]["httpGet"];
        if get["path"] != path || get["port"] != "http" {
            return Err(format!(
                "{kind} {name}: {probe} is not GET {path} on port http"
            ));
        }
        let tls = line(output, "listen").is_some_and(|l| l.starts_with("https://"));
        if tls != (get["scheme"] == "HTTPS") {
            return Err(format!(
                "{kind} {name}: {probe} scheme {} for a node that listens on {}",
                get["scheme"],
                line(output, "listen").unwrap_or("?")
            ));
        }
    }
    let state = line(output, "state dir")
        .and_then(|l| l.split(' ').next())
        .ok_or("no state dir line")?;
    let mount = container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["mountPath"] == state)
        .ok_or(format!(
            "{kind} {name}: the state directory {state} is not a volume (the mark would be lost with the container)"
        ))?;
    let volume = &mount["name"];
    let declared = pod["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|v| v["name"] == *volume);
    let claimed = claims
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["metadata"]["name"] == *volume);
    if !declared && !claimed {
        return Err(format!(
            "{kind} {name}: volume {volume} is declared nowhere"
        ));
    }
    if pod["securityContext"]["runAsNonRoot"] != true {
        return Err(format!("{kind} {name}: not runAsNonRoot"));
    }
    // The "restricted" Pod Security Standard, and no API token mounted.
    if pod["securityContext"]["seccompProfile"]["type"] != "RuntimeDefault" {
        return Err(format!("{kind} {name}: no seccompProfile RuntimeDefault"));
    }
    if pod["automountServiceAccountToken"] != false {
        return Err(format!(
            "{kind} {name}: the service account token is mounted (automountServiceAccountToken)"
        ));
    }
    // Secured by default: TLS on, tokens on, nothing issuing open.
    for (what, expected) in [
        ("tls", "on for HTTP and gRPC"),
        ("tokens", "1 token of "),
        ("open", "none"),
    ] {
        if !line(output, what).is_some_and(|l| l.starts_with(expected)) {
            return Err(format!(
                "{kind} {name}: {what} is not {expected:?}:\n{output}"
            ));
        }
    }
    Ok(())
}

/// A Service selects the pods and exposes HTTP and gRPC on their ports.
fn check_services(
    kind: &str,
    name: &str,
    labels: &Value,
    pod: &Value,
    services: &[&Value],
) -> Result<(), String> {
    let exposes = |service: &&&Value, port: &str| {
        service["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["name"] == port && p["targetPort"] == port)
    };
    let container_ports: Vec<&str> = pod["containers"][0]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| s(&p["name"]))
        .collect();
    let found = services.iter().any(|service| {
        service["spec"]["selector"] == *labels
            && service["spec"]["clusterIP"] != "None"
            && exposes(&service, "http")
            && exposes(&service, "grpc")
    });
    if !found || !container_ports.contains(&"http") || !container_ports.contains(&"grpc") {
        return Err(format!(
            "{kind} {name}: no Service exposes its pods' http and grpc ports"
        ));
    }
    Ok(())
}

/// Each manifest starts its containers as the node it means: the
/// StatefulSet's pods from their hostname's ordinal, the Deployment's
/// from etcd, with the URL from the Secret.
#[test]
fn every_manifest_container_passes_serve_check() {
    let dir = deploy_dir().join("kubernetes");
    assert_eq!(
        check_manifest(&dir.join("statefulset.yaml")).unwrap(),
        ["hostname", "hostname"]
    );
    assert_eq!(
        check_manifest(&dir.join("deployment-etcd.yaml")).unwrap(),
        ["etcd"]
    );
}

/// The image is tagged with the crate version wherever it is named: the
/// manifests, the Containerfile's build line and the deploying guide's.
#[test]
fn the_image_tag_is_the_crate_version() {
    let tag = format!("snowmint:{}", env!("CARGO_PKG_VERSION"));
    let dir = deploy_dir();
    for manifest in [
        "kubernetes/statefulset.yaml",
        "kubernetes/deployment-etcd.yaml",
    ] {
        for document in yaml_documents(&dir.join(manifest)).unwrap() {
            let containers = &document["spec"]["template"]["spec"]["containers"];
            for container in containers.as_array().into_iter().flatten() {
                assert_eq!(container["image"], tag.as_str(), "{manifest}");
            }
        }
    }
    let guide = std::fs::read_to_string(dir.join("../docs/deploying.md")).unwrap();
    let containerfile = std::fs::read_to_string(dir.join("Containerfile")).unwrap();
    let mut named_in_guide = 0;
    for (name, text) in [
        ("docs/deploying.md", &guide),
        ("Containerfile", &containerfile),
    ] {
        for line in text
            .lines()
            .filter(|l| l.contains("deploy/Containerfile -t "))
        {
            named_in_guide += usize::from(name == "docs/deploying.md");
            let named = line
                .split("-t ")
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap();
            assert_eq!(named, tag, "{name}: {line}");
        }
    }
    assert!(named_in_guide > 0, "docs/deploying.md builds no image");
}

/// Copies of the manifests, each broken in one way, fail the check, each
/// saying what is wrong.
#[test]
fn broken_manifests_fail_the_check() {
    let dir = deploy_dir().join("kubernetes");
    let work = temp_dir("deploy-broken");
    let cases: [(&str, &str, &str, &str); 13] = [
        (
            "statefulset.yaml",
            "          type: RuntimeDefault\n",
            "          type: Unconfined\n",
            "no seccompProfile RuntimeDefault",
        ),
        (
            "deployment-etcd.yaml",
            "automountServiceAccountToken: false",
            "automountServiceAccountToken: true",
            "service account token is mounted",
        ),
        (
            "statefulset.yaml",
            "            - --auth-token-file=/etc/snowmint/tokens/tokens\n",
            "",
            "tokens is not",
        ),
        (
            "deployment-etcd.yaml",
            "              snowmint.io/client: \"true\"",
            "              {}",
            "an ingress source is not a labelled pod",
        ),
        (
            "statefulset.yaml",
            "              scheme: HTTPS",
            "              scheme: HTTP",
            "readinessProbe scheme",
        ),
        (
            "statefulset.yaml",
            "- --machine-from-hostname\n",
            "- --machine-from-hostname\n            - --datacenter=3\n",
            "conflicts with --datacenter",
        ),
        (
            "statefulset.yaml",
            "--listen=0.0.0.0:8080",
            "--listen=127.0.0.1:8080",
            "loopback",
        ),
        (
            "statefulset.yaml",
            "path: /readyz",
            "path: /healthz",
            "readinessProbe is not GET /readyz",
        ),
        (
            "statefulset.yaml",
            "  replicas: 3",
            "  replicas: 1025",
            "hostname \"snowmint-1024\"",
        ),
        (
            "deployment-etcd.yaml",
            "value: \"0-31\"",
            "value: \"0-1\"",
            "3 replicas for 2 slots",
        ),
        (
            "deployment-etcd.yaml",
            "  url: etcd://",
            "  address: etcd://",
            "names key \"url\" of Secret",
        ),
        (
            "deployment-etcd.yaml",
            "mountPath: /var/lib/snowmint",
            "mountPath: /var/lib/elsewhere",
            "is not a volume",
        ),
        (
            "deployment-etcd.yaml",
            "      containers:\n",
            "      containers:\n    - bad indentation\n",
            "is not YAML",
        ),
    ];
    for (file, from, to, expected) in cases {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.contains(from), "{file} has no {from:?} to break");
        let broken = work.path().join(file);
        std::fs::write(&broken, text.replacen(from, to, 1)).unwrap();
        let error = check_manifest(&broken).expect_err(&format!("{file} with {to:?} passed"));
        assert!(error.contains(expected), "{file} with {to:?}: {error}");
    }
}

/// The unit's `[Section]`s and their `Key=value` lines.
fn unit_keys(text: &str) -> Result<BTreeMap<String, Vec<(String, String)>>, String> {
    let mut sections: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current = None;
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.to_owned());
            sections.entry(name.to_owned()).or_default();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or(format!("line {}: not Key=value: {raw}", number + 1))?;
        let section = current
            .clone()
            .ok_or(format!("line {}: outside a section", number + 1))?;
        sections
            .get_mut(&section)
            .unwrap()
            .push((key.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(sections)
}

/// The `KEY=value` lines of an environment file (systemd's
/// `EnvironmentFile`), comments and blank lines skipped.
fn env_file(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut env = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or(format!("env line {}: not KEY=value", number + 1))?;
        env.insert(key.trim().to_owned(), value.trim().to_owned());
    }
    Ok(env)
}

/// Checks a unit file with the environment file it names (`env`, the
/// text installed as /etc/snowmint/env): systemd's own verifier where
/// systemd-analyze runs (with the unit's binary swapped for the one under
/// test), the settings the unit must have, and its `ExecStart` through
/// --check with the file's variables. Returns the check's output.
fn check_unit(path: &Path, env: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).unwrap();
    let sections = unit_keys(&text)?;
    let get = |section: &str, key: &str| {
        sections
            .get(section)
            .and_then(|keys| keys.iter().rev().find(|(k, _)| k == key))
            .map(|(_, v)| v.as_str())
    };
    for (key, expected) in [
        ("DynamicUser", "yes"),
        ("StateDirectory", "snowmint"),
        ("ProtectSystem", "strict"),
        ("NoNewPrivileges", "yes"),
        ("Restart", "on-failure"),
        ("LimitNOFILE", "65536"),
        ("MemoryMax", "1G"),
        ("ProtectProc", "invisible"),
        ("ProcSubset", "pid"),
        ("SystemCallFilter", "@system-service"),
        // Required: without the operator's file the unit does not start.
        ("EnvironmentFile", "/etc/snowmint/env"),
    ] {
        if get("Service", key) != Some(expected) {
            return Err(format!("[Service] {key}={expected} is missing"));
        }
    }
    let exec = get("Service", "ExecStart").ok_or("no ExecStart")?;
    let words: Vec<&str> = exec.split_whitespace().collect();
    if words.get(1) != Some(&"serve") {
        return Err(format!("ExecStart does not run snowmint serve: {exec}"));
    }
    let state_at = words
        .iter()
        .position(|w| *w == "--state-dir")
        .ok_or("ExecStart does not tell the node its state directory")?;
    if words.get(state_at + 1) != Some(&"${STATE_DIRECTORY}") {
        return Err("--state-dir is not the StateDirectory systemd makes".to_owned());
    }
    // The environment file is the one place the settings come from: a
    // flag here would beat it, silently.
    if let Some(flag) = words[2..]
        .iter()
        .find(|w| w.starts_with("--") && **w != "--state-dir")
    {
        return Err(format!(
            "ExecStart gives {flag}, which beats the environment file's setting"
        ));
    }
    let env = env_file(env)?;
    // systemd sets STATE_DIRECTORY to /var/lib/<StateDirectory>.
    let args: Vec<String> = words[2..]
        .iter()
        .map(|w| w.replace("${STATE_DIRECTORY}", "/var/lib/snowmint"))
        .collect();
    let (code, output) = serve_check(&args, &env);
    if code != Some(0) {
        return Err(format!(
            "ExecStart through --check exits {code:?}:\n{output}"
        ));
    }
    if line(&output, "state dir")
        .is_none_or(|l| !l.starts_with("/var/lib/snowmint (from --state-dir)"))
    {
        return Err(format!("the state directory is not systemd's:\n{output}"));
    }
    if let Some(analyze) = systemd_analyze() {
        let work = temp_dir("deploy-unit");
        let copy = work.path().join("snowmint.service");
        let env_copy = work.path().join("env");
        std::fs::write(&env_copy, "").unwrap();
        let text = text
            .replace(words[0], SNOWMINT)
            .replace("/etc/snowmint/env", env_copy.to_str().unwrap());
        std::fs::write(&copy, text).unwrap();
        let verified = Command::new(analyze)
            .arg("verify")
            .arg(&copy)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&verified.stdout),
            String::from_utf8_lossy(&verified.stderr)
        );
        if !verified.status.success() || !said.trim().is_empty() {
            return Err(format!("systemd-analyze verify: {said}"));
        }
    }
    Ok(output)
}

/// systemd-analyze, when it runs here.
fn systemd_analyze() -> Option<&'static str> {
    Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "systemd-analyze")
}

/// The unit passes systemd's verifier (where it runs here) and, with its
/// environment file, starts the node the file means: the identity comes
/// from the file alone (a `SNOWMINT_DATACENTER` there is the node's, a
/// `SNOWMINT_COORDINATOR` there makes a fleet node, where a flag in the
/// unit used to beat the one and clash with the other); broken copies
/// fail.
#[test]
fn the_systemd_unit_takes_its_settings_from_its_env_file() {
    let unit = deploy_dir().join("systemd/snowmint.service");
    let env = std::fs::read_to_string(deploy_dir().join("systemd/env")).unwrap();
    if systemd_analyze().is_none() {
        eprintln!("systemd-analyze does not run here: checking the unit's syntax only");
    }
    let output = check_unit(&unit, &env).unwrap();
    assert!(
        line(&output, "identity").is_some_and(|l| l.starts_with(
            "static: slot 1 (datacenter 0 (from SNOWMINT_DATACENTER), machine 1 (from SNOWMINT_MACHINE))"
        )),
        "{output}"
    );
    let moved = env.replace("SNOWMINT_DATACENTER=0", "SNOWMINT_DATACENTER=3");
    let output = check_unit(&unit, &moved).unwrap();
    assert!(
        line(&output, "identity")
            .unwrap()
            .contains("datacenter 3 (from SNOWMINT_DATACENTER)"),
        "{output}"
    );
    let fleet = env
        .replace("SNOWMINT_DATACENTER=0\n", "")
        .replace("SNOWMINT_MACHINE=1\n", "")
        .replace(
            "#SNOWMINT_COORDINATOR=etcd://ids@10.0.0.5:2379",
            "SNOWMINT_COORDINATOR=etcd://10.0.0.5:2379",
        )
        .replace("#SNOWMINT_FLEET=ids", "SNOWMINT_FLEET=ids");
    let output = check_unit(&unit, &fleet).unwrap();
    assert!(
        line(&output, "identity").unwrap().starts_with("etcd: "),
        "{output}"
    );

    let text = std::fs::read_to_string(&unit).unwrap();
    let work = temp_dir("deploy-unit-broken");
    for (from, to, env_from, env_to, expected) in [
        (
            "StateDirectory=snowmint",
            "",
            "",
            "",
            "StateDirectory=snowmint is missing",
        ),
        (
            "ProtectProc=invisible",
            "",
            "",
            "",
            "ProtectProc=invisible is missing",
        ),
        (
            "",
            "",
            "SNOWMINT_MACHINE=1",
            "SNOWMINT_MACHINE=32",
            "exits Some(2)",
        ),
        (
            "--state-dir ${STATE_DIRECTORY}",
            "--state-dir ${STATE_DIRECTORY} --datacenter 0",
            "",
            "",
            "ExecStart gives --datacenter",
        ),
        (
            "--state-dir ${STATE_DIRECTORY}",
            "",
            "",
            "",
            "does not tell the node",
        ),
        (
            "[Service]",
            "[Service]\nRestartSecs=2",
            "",
            "",
            "systemd-analyze verify",
        ),
    ] {
        if expected.starts_with("systemd-analyze") && systemd_analyze().is_none() {
            continue;
        }
        let broken = work.path().join("snowmint.service");
        let text = if from.is_empty() {
            text.clone()
        } else {
            text.replacen(from, to, 1)
        };
        std::fs::write(&broken, text).unwrap();
        let env = if env_from.is_empty() {
            env.clone()
        } else {
            env.replacen(env_from, env_to, 1)
        };
        let error = check_unit(&broken, &env).expect_err(&format!("{to:?} {env_to:?} passed"));
        assert!(error.contains(expected), "{to:?} {env_to:?}: {error}");
    }
}

/// The Containerfile's settings go through --check as the image sets
/// them: a node listening on every interface, its state directory the
/// image's volume; and it has what the image must have.
#[test]
fn the_containerfile_sets_up_a_node_that_passes_serve_check() {
    let text = std::fs::read_to_string(deploy_dir().join("Containerfile")).unwrap();
    // Instructions, with continued lines joined.
    let joined = text.replace("\\\n", " ");
    let instructions: Vec<&str> = joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let find = |word: &str| {
        instructions
            .iter()
            .filter(|l| l.split_whitespace().next() == Some(word))
            .map(|l| l[word.len()..].trim())
            .collect::<Vec<_>>()
    };
    assert!(
        find("ARG")[0].starts_with("BASE=docker.io/library/debian:"),
        "{:?}",
        find("ARG")
    );
    assert!(find("ARG")[0].ends_with("-slim"));
    assert_eq!(find("FROM"), ["${BASE}"]);
    let user = find("USER")[0];
    assert!(
        !user.starts_with("0") && !user.starts_with("root"),
        "USER {user}"
    );
    assert_eq!(find("STOPSIGNAL"), ["SIGTERM"]);
    let healthcheck = find("HEALTHCHECK")[0];
    assert!(
        healthcheck.ends_with("CMD [\"snowmint\", \"probe\", \"/readyz\"]"),
        "{healthcheck}"
    );
    assert_eq!(find("ENTRYPOINT"), ["[\"snowmint\", \"serve\"]"]);
    let mut env = BTreeMap::new();
    for pair in find("ENV")[0].split_whitespace() {
        let (name, value) = pair.split_once('=').unwrap();
        env.insert(name.to_owned(), value.to_owned());
    }
    // The image sets no identity: each deployment gives its node one (the
    // manifests do), and the image alone refuses to start without.
    let (code, output) = serve_check(&[], &env);
    assert_eq!(code, Some(2), "{output}");
    assert!(output.contains("no node identity is set"), "{output}");
    let mut given = env.clone();
    given.insert("SNOWMINT_DATACENTER".to_owned(), "1".to_owned());
    given.insert("SNOWMINT_MACHINE".to_owned(), "2".to_owned());
    let (code, output) = serve_check(&[], &given);
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(
        line(&output, "listen"),
        Some("http://0.0.0.0:8080 (from SNOWMINT_LISTEN)")
    );
    let state = line(&output, "state dir").unwrap();
    let volume = find("VOLUME")[0];
    assert!(
        state.starts_with(&format!("{volume} (from SNOWMINT_STATE_DIR)")),
        "{state}"
    );
    for port in find("EXPOSE")[0].split_whitespace() {
        assert!(["8080", "9090", "11211"].contains(&port), "EXPOSE {port}");
    }
}
