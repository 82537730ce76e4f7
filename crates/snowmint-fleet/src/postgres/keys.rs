//! The engine's key names, read as rows of the tables: a slot key is a
//! row of `slots`, a mark key a row of `marks`, a slot's claim history a
//! row of `claims`, the layout record a row of `fleets`.

use crate::coordinator::BackendError;

/// What a key of the engine names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key<'a> {
    /// `/snowmint/<fleet>/slots`: every slot of the fleet.
    Slots { fleet: &'a str },
    /// `/snowmint/<fleet>/slots/<slot>`: one row of `slots`.
    Slot { fleet: &'a str, slot: i64 },
    /// `/snowmint/<fleet>/hwm`: every mark of the fleet.
    Marks { fleet: &'a str },
    /// `/snowmint/<fleet>/hwm/<slot>`: one row of `marks`.
    Mark { fleet: &'a str, slot: i64 },
    /// `/snowmint/<fleet>/claims`: every slot's claim history.
    Histories { fleet: &'a str },
    /// `/snowmint/<fleet>/claims/<slot>`: one row of `claims`.
    History { fleet: &'a str, slot: i64 },
    /// `/snowmint/<fleet>/layout`: the fleet's row of `fleets`.
    Layout { fleet: &'a str },
}

impl<'a> Key<'a> {
    /// Reads a key the engine built.
    pub(super) fn parse(path: &'a str) -> Result<Key<'a>, BackendError> {
        let unknown = || BackendError::unavailable(format!("{path} is not a key of a fleet"));
        let rest = path.strip_prefix("/snowmint/").ok_or_else(unknown)?;
        let mut parts = rest.split('/');
        let fleet = parts.next().filter(|f| !f.is_empty()).ok_or_else(unknown)?;
        let kind = parts.next();
        let slot = parts
            .next()
            .map(|n| n.parse::<i64>().map_err(|_| unknown()));
        if parts.next().is_some() {
            return Err(unknown());
        }
        match (kind, slot) {
            (Some("slots"), None) => Ok(Key::Slots { fleet }),
            (Some("slots"), Some(slot)) => Ok(Key::Slot { fleet, slot: slot? }),
            (Some("hwm"), None) => Ok(Key::Marks { fleet }),
            (Some("hwm"), Some(slot)) => Ok(Key::Mark { fleet, slot: slot? }),
            (Some("claims"), None) => Ok(Key::Histories { fleet }),
            (Some("claims"), Some(slot)) => Ok(Key::History { fleet, slot: slot? }),
            (Some("layout"), None) => Ok(Key::Layout { fleet }),
            _ => Err(unknown()),
        }
    }

    /// The slot key's fleet and slot, or an error naming what was
    /// expected.
    pub(super) fn slot(path: &'a str) -> Result<(&'a str, i64), BackendError> {
        match Key::parse(path)? {
            Key::Slot { fleet, slot } => Ok((fleet, slot)),
            _ => Err(BackendError::unavailable(format!(
                "{path} is not a slot key"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_keys_map_onto_rows() {
        assert_eq!(
            Key::parse("/snowmint/ids/slots").unwrap(),
            Key::Slots { fleet: "ids" }
        );
        assert_eq!(
            Key::parse("/snowmint/ids/slots/12").unwrap(),
            Key::Slot {
                fleet: "ids",
                slot: 12
            }
        );
        assert_eq!(
            Key::parse("/snowmint/ids/hwm/3").unwrap(),
            Key::Mark {
                fleet: "ids",
                slot: 3
            }
        );
        assert_eq!(
            Key::parse("/snowmint/ids/layout").unwrap(),
            Key::Layout { fleet: "ids" }
        );
        assert_eq!(
            Key::parse("/snowmint/ids/claims/5").unwrap(),
            Key::History {
                fleet: "ids",
                slot: 5
            }
        );
        for bad in [
            "/other/ids/slots",
            "/snowmint//slots",
            "/snowmint/ids/slots/x",
            "/snowmint/ids/slots/1/2",
            "/snowmint/ids/layout/1",
        ] {
            let err = Key::parse(bad).unwrap_err();
            assert_eq!(err.to_string(), format!("{bad} is not a key of a fleet"));
        }
        assert!(Key::slot("/snowmint/ids/hwm/3").is_err());
    }
}
