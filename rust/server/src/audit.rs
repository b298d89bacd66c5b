//! The audit log: one record per verdict, kept in a bounded ring the host can read. A record
//! names the client, the tool, the names of its arguments, the verdict, a reason from a fixed
//! vocabulary and how long judging took — never the token, never an argument's value, and
//! never the guard's or the host's own words (which may quote values).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::guard::ClientIdentity;
use crate::server_name::ServerName;

/// What was decided for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditVerdict {
    /// The call ran.
    Allowed,
    /// The call was refused (by the baseline policy, the guard, or a person).
    Denied,
}

/// One judged call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    /// When the verdict was reached.
    pub at: SystemTime,
    /// Who asked.
    pub client: ClientIdentity,
    /// On which server.
    pub server: ServerName,
    /// The tool's domain.
    pub domain: Arc<str>,
    /// The tool's name.
    pub tool: Arc<str>,
    /// The names of the arguments the call gave, as its tool's schema declares them.
    pub arguments: Vec<Arc<str>>,
    /// The decision.
    pub verdict: AuditVerdict,
    /// Who decided and why, without values: `allowed by the Security Guard`, `confirmed by the
    /// user`, `denied by the Security Guard`, `denied by the baseline policy: `path` is outside
    /// the project; …`.
    pub reason: Cow<'static, str>,
    /// How long the decision took, confirmation included.
    pub duration: Duration,
}

/// A bounded ring of audit records.
#[derive(Debug)]
pub struct AuditLog {
    capacity: usize,
    records: Mutex<VecDeque<AuditRecord>>,
}

impl AuditLog {
    /// A log that keeps the newest `capacity` records.
    pub fn new(capacity: usize) -> Self {
        AuditLog {
            capacity,
            records: Mutex::new(VecDeque::with_capacity(capacity.min(1024))),
        }
    }

    /// Appends a record, dropping the oldest when full.
    pub fn record(&self, record: AuditRecord) {
        tracing::info!(
            server = %record.server,
            tool = %record.tool,
            arguments = ?record.arguments,
            verdict = ?record.verdict,
            reason = %record.reason,
            pid = ?record.client.pid,
            "tool call judged"
        );
        if self.capacity == 0 {
            return;
        }
        let mut records = self
            .records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if records.len() == self.capacity {
            records.pop_front();
        }
        records.push_back(record);
    }

    /// Every kept record, oldest first.
    pub fn records(&self) -> Vec<AuditRecord> {
        self.records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tool: &str) -> AuditRecord {
        AuditRecord {
            at: SystemTime::now(),
            client: ClientIdentity::default(),
            server: ServerName::Code,
            domain: "d".into(),
            tool: tool.into(),
            verdict: AuditVerdict::Allowed,
            arguments: Vec::new(),
            reason: "guard allowed".into(),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn the_oldest_record_goes_first_when_full() {
        let log = AuditLog::new(2);
        for tool in ["a", "b", "c"] {
            log.record(record(tool));
        }
        let tools: Vec<String> = log
            .records()
            .into_iter()
            .map(|r| r.tool.to_string())
            .collect();
        assert_eq!(tools, ["b", "c"]);
    }
}
