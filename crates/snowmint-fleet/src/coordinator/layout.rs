//! The fleet's layout record, `/snowmint/<fleet>/layout`: the layout its
//! IDs are made in, written by the first node that claims and checked by
//! every other before it claims.
//!
//! Two nodes of one fleet with different layouts (other widths, another
//! epoch) hold different slot keys yet can make identical IDs, so a node
//! whose layout is not the recorded one claims no slot. The record is read
//! first and created only when absent, so a node joining a running fleet
//! costs the coordinator no write for it.

use snowmint::Layout;

use super::engine::{Live, Shared};
use super::{Backend, ClaimError, Timing};

impl<B: Backend> Shared<B> {
    /// Checks that the fleet's recorded layout is this node's, recording
    /// it if the fleet has none yet.
    pub(super) async fn check_layout(
        &self,
        live: &Live<B::Session>,
        timing: Timing,
    ) -> Result<(), ClaimError> {
        let path = self.paths.layout();
        let ours = self.config.layout.spec();
        let read = self
            .step(timing.step_limit(), self.backend.read(&live.session, &path))
            .await?;
        let recorded = match read {
            Some(found) => found.value,
            None => {
                let create = self
                    .backend
                    .create_record(&live.session, &path, ours.as_bytes());
                match self.step(timing.step_limit(), create).await? {
                    None => return Ok(()),
                    // Another node recorded it first.
                    Some(value) => value,
                }
            }
        };
        let text = String::from_utf8_lossy(&recorded);
        let layout = text
            .trim()
            .parse::<Layout>()
            .map_err(|_| ClaimError::BadLayoutRecord {
                path: path.clone(),
                text: text.clone().into_owned(),
            })?;
        if layout.spec() == ours {
            Ok(())
        } else {
            Err(ClaimError::LayoutMismatch {
                fleet: self.config.fleet().to_owned(),
                path,
                recorded: layout.spec(),
                ours,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_spell_widths_and_epoch_out() {
        assert_eq!(Layout::TWITTER.spec(), "41/5/5/12@1288834974657");
        assert_eq!(Layout::DISCORD.spec(), "41/5/5/12@1420070400000");
        let custom = Layout::new(1_500_000_000_000, 41, 5, 7, 10).unwrap();
        assert_eq!(custom.spec(), "41/5/7/10@1500000000000");
        // What a record holds reads back as the same layout.
        for layout in [Layout::TWITTER, Layout::DISCORD, custom] {
            assert_eq!(layout.spec().parse::<Layout>().unwrap(), layout);
        }
    }
}
