//! Slots from hostname ordinals, as Kubernetes StatefulSets name their pods.

use crate::FleetError;

/// The ordinal at the end of a hostname: `ids-12` -> 12.
///
/// A domain part is ignored (`ids-12.ids.default.svc` -> 12). The ordinal is
/// the decimal number after the last `-` of the first label.
///
/// # Examples
///
/// ```
/// use snowmint_fleet::hostname_ordinal;
///
/// assert_eq!(hostname_ordinal("ids-12")?, 12);
/// assert_eq!(hostname_ordinal("web-api-0.web.prod.svc.cluster.local")?, 0);
/// assert!(hostname_ordinal("ids").is_err());
/// # Ok::<(), snowmint_fleet::FleetError>(())
/// ```
pub fn ordinal(hostname: &str) -> Result<u64, FleetError> {
    let error = |reason: &str| FleetError::Hostname {
        hostname: hostname.to_owned(),
        reason: reason.to_owned(),
    };
    let label = hostname.split('.').next().unwrap_or_default();
    let Some((_, digits)) = label.rsplit_once('-') else {
        return Err(error(
            "it has no ordinal (expected NAME-N, such as ids-12, as a StatefulSet names its pods)",
        ));
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error(
            "it does not end in a number after its last '-' (expected NAME-N, such as ids-12)",
        ));
    }
    digits
        .parse()
        .map_err(|_| error("its ordinal does not fit 64 bits"))
}

/// This machine's hostname: `/proc/sys/kernel/hostname`, else
/// `/etc/hostname`, else the `HOSTNAME` environment variable.
///
/// # Examples
///
/// ```no_run
/// let name = snowmint_fleet::system_hostname()?;
/// println!("{name}");
/// # Ok::<(), snowmint_fleet::FleetError>(())
/// ```
pub fn system_hostname() -> Result<String, FleetError> {
    let from_files = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .map(|text| text.trim().to_owned())
        .find(|name| !name.is_empty());
    from_files
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|n| !n.is_empty()))
        .ok_or_else(|| FleetError::Hostname {
            hostname: String::new(),
            reason: "the hostname could not be read (tried /proc/sys/kernel/hostname, /etc/hostname, $HOSTNAME)".to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostname is outside input (`--hostname`, `SNOWMINT_HOSTNAME`): a
    /// long one is cut in the message, as every echoed value is.
    #[test]
    fn a_long_hostname_is_cut_in_the_message() {
        let long = format!("{}-x", "a".repeat(500));
        let message = ordinal(&long).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("hostname \"{}...\"", "a".repeat(40))),
            "{message}"
        );
        assert!(message.len() < 200, "{message}");
    }

    #[test]
    fn ordinals() {
        assert_eq!(ordinal("ids-0").unwrap(), 0);
        assert_eq!(ordinal("a-b-1023").unwrap(), 1023);
        for bad in ["", "ids", "ids-", "ids-1x", "ids-+1", "-"] {
            let err = ordinal(bad).unwrap_err().to_string();
            assert!(err.starts_with(&format!("hostname {bad:?}")), "{err}");
        }
        assert!(
            ordinal("ids-99999999999999999999")
                .unwrap_err()
                .to_string()
                .contains("64 bits")
        );
    }
}
