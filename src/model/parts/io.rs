//! The I/O and replication parts: each chunk with its device (`onstat -D`, `-g iof`,
//! `/proc/diskstats`), and the server's place in replication with its peers' lag.

use crate::source::Source;

/// What the chunks' view reads.
pub(crate) const IO_INPUTS: &[Source] = &[
    Source::OnstatDUpper,
    Source::ChunkDevices,
    Source::ProcDiskstats,
    Source::OnstatGIof,
    Source::OnstatGCluster,
];

/// What replication reads, besides the mode flags of the latest `onstat -u`'s banner (taken
/// by value: the banner is read every second, the flags seldom change).
pub(crate) const REPLICATION_INPUTS: &[Source] = &[
    Source::OnstatGCluster,
    Source::OnstatGRss,
    Source::OnstatGSds,
    Source::OnstatGDri,
    Source::OnstatL,
];
