//! The fleet's key names, built in one place:
//! `/snowmint/<fleet>/slots/<slot>`, `/snowmint/<fleet>/hwm/<slot>`,
//! `/snowmint/<fleet>/claims/<slot>` (the claim history),
//! `/snowmint/<fleet>/layout` and `/snowmint/<fleet>/clock` (written to
//! read a ZooKeeper leader's clock).

/// The keys of one fleet.
pub(super) struct Paths {
    root: String,
}

impl Paths {
    /// The keys of `fleet`.
    pub(super) fn new(fleet: &str) -> Paths {
        Paths {
            root: format!("/snowmint/{fleet}"),
        }
    }

    pub(super) fn slots_dir(&self) -> String {
        format!("{}/slots", self.root)
    }

    pub(super) fn marks_dir(&self) -> String {
        format!("{}/hwm", self.root)
    }

    pub(super) fn slot(&self, slot: u64) -> String {
        format!("{}/slots/{slot}", self.root)
    }

    pub(super) fn mark(&self, slot: u64) -> String {
        format!("{}/hwm/{slot}", self.root)
    }

    pub(super) fn layout(&self) -> String {
        format!("{}/layout", self.root)
    }

    pub(super) fn claims_dir(&self) -> String {
        format!("{}/claims", self.root)
    }

    pub(super) fn claims(&self, slot: u64) -> String {
        format!("{}/claims/{slot}", self.root)
    }

    pub(super) fn clock(&self) -> String {
        format!("{}/clock", self.root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_design() {
        let paths = Paths::new("ids");
        assert_eq!(paths.slot(7), "/snowmint/ids/slots/7");
        assert_eq!(paths.mark(7), "/snowmint/ids/hwm/7");
        assert_eq!(paths.slots_dir(), "/snowmint/ids/slots");
        assert_eq!(paths.marks_dir(), "/snowmint/ids/hwm");
        assert_eq!(paths.layout(), "/snowmint/ids/layout");
        assert_eq!(paths.claims(7), "/snowmint/ids/claims/7");
        assert_eq!(paths.claims_dir(), "/snowmint/ids/claims");
        assert_eq!(paths.clock(), "/snowmint/ids/clock");
    }
}
