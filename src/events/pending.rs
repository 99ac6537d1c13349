//! The pending outbox (`EVENTS_PENDING`): events not yet handed to
//! delivery, kept so a stop does not lose them.
//!
//! Two kinds of row land here. A spend event is written by its charge's
//! own transaction (see `billing::record_event`), so it is there even if
//! the process dies before the event was published. At shutdown, every
//! event still in the dispatcher's queue is written here too. The
//! dispatcher removes a row (durably) when it takes the event, *before*
//! delivering it: delivery stays at most once, and what was never taken is
//! delivered after the next start, oldest first.

use crate::billing::StoredEvent;
use crate::store::tables::{EVENTS_PENDING, Reader, Table};
use crate::store::{Store, StoreError};

use super::{Audience, Event};

const PENDING: Table<StoredEvent> = Table::new(EVENTS_PENDING);
/// Marks the sequence part of a row saved at shutdown, so it never equals
/// an outbox row's key (those count up from 0 in the `events` table).
const SAVED_AT_SHUTDOWN: u64 = 1 << 63;

/// Every pending event, oldest first, with its row.
pub fn load(store: &Store) -> Result<Vec<(Vec<u8>, Event)>, StoreError> {
    let rows = store.read(|tx| tx.scan_raw(EVENTS_PENDING))?;
    Ok(rows
        .into_iter()
        .filter_map(
            |(key, value)| match crate::store::codec::decode::<StoredEvent>(&value) {
                Ok(stored) => Some((key, Event::from_stored(&stored))),
                Err(e) => {
                    tracing::error!(error = %e, "an unreadable pending event was skipped");
                    None
                }
            },
        )
        .collect())
}

/// Takes rows off the pending outbox: their events are being delivered.
pub async fn remove(store: &Store, rows: Vec<Vec<u8>>) -> Result<(), StoreError> {
    store
        .write(move |txn| {
            for row in &rows {
                PENDING.remove(txn, row)?;
            }
            Ok(())
        })
        .await
}

/// Saves events still queued at shutdown; returns how many.
pub async fn save(store: &Store, events: Vec<Event>) -> Result<usize, StoreError> {
    let count = events.len();
    if count == 0 {
        return Ok(0);
    }
    store
        .write(move |txn| {
            for (n, event) in events.iter().enumerate() {
                let mut key = event.at.max(0).to_be_bytes().to_vec();
                key.extend_from_slice(&(SAVED_AT_SHUTDOWN | n as u64).to_be_bytes());
                // A second stop in the same millisecond: the next free row.
                while PENDING.get(txn, &key)?.is_some() {
                    let tail = u64::from_be_bytes(key[8..16].try_into().expect("8 bytes"));
                    key.truncate(8);
                    key.extend_from_slice(&(tail + count as u64).to_be_bytes());
                }
                PENDING.put(txn, &key, &stored(event))?;
            }
            Ok(())
        })
        .await?;
    Ok(count)
}

/// An event as the outbox keeps it (the inverse of `Event::from_stored`).
fn stored(event: &Event) -> StoredEvent {
    StoredEvent {
        event: event.kind,
        tenant_id: match &event.audience {
            Audience::Tenant(id) => Some(id.clone()),
            Audience::EveryTenant => None,
        },
        at: event.at,
        data: event.data.to_string(),
    }
}
