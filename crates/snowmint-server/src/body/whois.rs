//! The answer of `GET /v1/whois/{id}` (and `snowmint whois --format
//! json`): which claim of the fleet covered the ID's slot at its
//! millisecond.

use serde::Serialize;
use snowmint::{SnowflakeId, format_time};
use snowmint_fleet::{ClaimEntry, Whois, WhoisAnswer};
use utoipa::ToSchema;
use utoipa::openapi::schema::ObjectBuilder;

use super::{decimal_id, one_of_names};

/// Which claim covered an ID's slot at its millisecond, from the fleet's
/// claim history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Whois)]
pub struct WhoisBody {
    /// The ID asked about.
    #[schema(schema_with = decimal_id)]
    pub id: SnowflakeId,
    /// The ID's time, Unix milliseconds.
    pub timestamp_ms: i64,
    /// The ID's time: RFC 3339, UTC, milliseconds.
    #[schema(examples("2023-11-14T22:13:20.000Z"))]
    pub time: String,
    /// The fleet whose history was read.
    #[schema(examples("ids"))]
    pub fleet: String,
    /// The fleet's layout, `T/D/M/S@EPOCH`, which the ID was read in.
    #[schema(examples("41/5/5/12@1288834974657"))]
    pub layout: String,
    /// The ID's slot: datacenter * 2^machine_bits + machine.
    pub slot: u64,
    /// The ID's datacenter.
    pub datacenter: u64,
    /// The ID's machine.
    pub machine: u64,
    /// What the history says.
    #[schema(schema_with = answer)]
    pub answer: &'static str,
    /// The answer in a sentence.
    pub message: String,
    /// The claims that covered the slot at that millisecond: one when
    /// `covered`, two or more on a `conflict`, none otherwise.
    pub claims: Vec<ClaimRecordBody>,
    /// How many records of the slot's claims are kept.
    pub records_kept: u64,
    /// The generation of the oldest record kept; older ones were pruned.
    #[schema(required = true)]
    pub oldest_kept_generation: Option<u64>,
    /// The slot's high-water mark now, Unix ms: no ID of its open claim
    /// is above it.
    #[schema(required = true)]
    pub mark_ms: Option<i64>,
}

/// One claim of a slot, as the claim history keeps it. Times are on the
/// holder's clock (`end` of a take-over: the next holder's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ClaimRecord)]
pub struct ClaimRecordBody {
    /// The slot's own count of claims, from 1.
    pub generation: u64,
    /// What the holder wrote into its slot key.
    #[schema(examples(
        "host=web-1 pid=4242 listen=127.0.0.1:8081 started=2023-11-14T22:13:20.000Z"
    ))]
    pub holder: String,
    /// The holder's host name, when the holder reads as a node's.
    #[schema(required = true, examples("web-1"))]
    pub host: Option<String>,
    /// The holder's process id.
    #[schema(required = true)]
    pub pid: Option<u32>,
    /// The holder's HTTP address.
    #[schema(required = true, examples("127.0.0.1:8081"))]
    pub listen: Option<String>,
    /// The holder's gRPC address, if it served gRPC.
    #[schema(required = true)]
    pub grpc: Option<String>,
    /// The holder's snowmint version.
    #[schema(examples("0.1.0"))]
    pub version: String,
    /// The holder's lease (etcd) or session.
    #[schema(examples("lease 694d9a5c1e2f3b04"))]
    pub session: String,
    /// When the holder asked for the slot, Unix ms.
    pub start_ms: i64,
    /// The same, RFC 3339.
    pub start: String,
    /// The slot's mark when it was claimed: every ID of the claim is above
    /// it.
    #[schema(required = true)]
    pub floor_ms: Option<i64>,
    /// When the claim ended, Unix ms; null while held, or lost and not
    /// yet taken over.
    #[schema(required = true)]
    pub end_ms: Option<i64>,
    /// The same, RFC 3339.
    #[schema(required = true)]
    pub end: Option<String>,
    /// The highest timestamp an ID of the claim can carry, once ended.
    #[schema(required = true)]
    pub last_ms: Option<i64>,
    /// How it ended: `release` or `takeover`; null while open.
    #[schema(required = true, examples("release"))]
    pub ended: Option<&'static str>,
}

/// The schema of the answer's name.
fn answer() -> ObjectBuilder {
    one_of_names(
        WhoisAnswer::ALL.map(WhoisAnswer::name),
        "covered: one claim covered the slot at that millisecond; not_covered: none did; conflict: two or more did, which must never happen; pruned: the records that could say were pruned.",
    )
}

impl WhoisBody {
    /// The body of `whois`.
    pub fn new(whois: &Whois) -> WhoisBody {
        WhoisBody {
            id: whois.id,
            timestamp_ms: whois.timestamp_ms,
            time: format_time(whois.timestamp_ms).to_string(),
            fleet: whois.fleet.clone(),
            layout: whois.layout.spec(),
            slot: whois.slot,
            datacenter: whois.layout.pair_of(whois.node).0,
            machine: whois.layout.pair_of(whois.node).1,
            answer: whois.answer.name(),
            message: whois.message(),
            claims: whois.claims.iter().map(ClaimRecordBody::new).collect(),
            records_kept: whois.kept.len() as u64,
            oldest_kept_generation: whois.kept.first().map(|record| record.generation),
            mark_ms: whois.mark_ms,
        }
    }
}

impl ClaimRecordBody {
    /// The body of one record.
    pub fn new(record: &ClaimEntry) -> ClaimRecordBody {
        let holder = record.parsed_holder();
        ClaimRecordBody {
            generation: record.generation,
            holder: record.holder.clone(),
            host: holder.as_ref().map(|h| h.host.clone()),
            pid: holder.as_ref().map(|h| h.pid),
            listen: holder.as_ref().map(|h| h.listen.clone()),
            grpc: holder.as_ref().and_then(|h| h.grpc.clone()),
            version: record.version.clone(),
            session: record.session.clone(),
            start_ms: record.start_ms,
            start: format_time(record.start_ms).to_string(),
            floor_ms: record.floor_ms,
            end_ms: record.end_ms,
            end: record.end_ms.map(|ms| format_time(ms).to_string()),
            last_ms: record.last_ms,
            ended: record.ended.map(|end| end.name()),
        }
    }
}
