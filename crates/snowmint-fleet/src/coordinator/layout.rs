//! The fleet's layout record, `/snowmint/<fleet>/layout`: the layout its
//! IDs are made in, written by the first node that claims and checked by
//! every other before it claims.
//!
//! Two nodes of one fleet with different layouts (other widths, another
//! epoch or unit) hold different slot keys yet can make identical IDs, so
//! a node whose layout is not the recorded one claims no slot. Layouts are
//! compared by the IDs they make ([`Layout::same_ids_as`]): what the fields
//! are called does not matter, so a record written as `T/D/M/S@EPOCH`
//! matches the same layout written with field names. The record is read
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
        if layout.same_ids_as(&self.config.layout) {
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
        let custom = Layout::twitter_shape(1_500_000_000_000, [41, 5, 7, 10]).unwrap();
        assert_eq!(custom.spec(), "41/5/7/10@1500000000000");
        assert_eq!(
            Layout::SONYFLAKE.spec(),
            "time:39/sequence:8/machine:16@1409529600000,10ms"
        );
        // What a record holds reads back as the same layout.
        for layout in [Layout::TWITTER, Layout::DISCORD, Layout::SONYFLAKE, custom] {
            assert_eq!(layout.spec().parse::<Layout>().unwrap(), layout);
        }
        // The names of fields do not make other IDs; widths, epochs and
        // units do.
        let renamed: Layout = "time:41/dc:5:node/m:5:node/seq:12:sequence@1288834974657"
            .parse()
            .unwrap();
        assert!(renamed.same_ids_as(&Layout::TWITTER));
        // A fleet recorded with Discord's IDs as 63 bits takes nodes of the
        // 64-bit preset: the same IDs for every time both hold.
        let narrow: Layout = "41/5/5/12@1420070400000".parse().unwrap();
        assert!(Layout::DISCORD.same_ids_as(&narrow));
        assert!(!Layout::DISCORD.same_ids_as(&Layout::TWITTER));
        assert!(!Layout::SONYFLAKE.same_ids_as(&Layout::SONYFLAKE_V2));
    }
}
