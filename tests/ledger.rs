//! The ledger on a real store with an injected clock: charges carry their
//! time, and authentication is asked "as of" a time, so a cycle boundary can
//! be crossed without waiting for midnight.

use std::sync::Arc;

use tollgate::auth::keys::{KeySettings, KeyState, Keys, Latitude, ResetInterval};
use tollgate::base::error::Code;
use tollgate::base::time::now_ms;
use tollgate::billing::{self, UsageRecord, usage};
use tollgate::catalogue::Endpoint;
use tollgate::store::Store;
use tollgate::tenants::{self, Tier};

const DAY: i64 = 86_400_000;

fn record(key_id: &str, tenant_id: &str, cost: u64, at: i64, n: usize) -> UsageRecord {
    UsageRecord {
        request_id: format!("req-{at}-{n}"),
        key_id: key_id.into(),
        tenant_id: tenant_id.into(),
        model: "m".into(),
        provider: "p".into(),
        prompt_tokens: 1,
        completion_tokens: 1,
        cost,
        latency_ms: 1,
        is_fallback: false,
        streamed: false,
        estimated: false,
        at,
        endpoint: Endpoint::Chat,
    }
}

fn fired(store: &Store, from: i64, to: i64) -> Vec<String> {
    let scope = usage::Scope {
        from,
        to,
        ..Default::default()
    };
    usage::events(store, &scope)
        .unwrap()
        .into_iter()
        .map(|e| e.event.as_str().to_owned())
        .collect()
}

/// A fresh store with one enterprise tenant, `acme`.
async fn open() -> (tempfile::TempDir, Arc<Store>, Keys, tenants::Tenant) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path()).unwrap());
    let keys = Keys::new(store.clone());
    let tenant = tenants::create(&store, "acme", Tier::Enterprise)
        .await
        .unwrap();
    (dir, store, keys, tenant)
}

#[tokio::test]
async fn a_cycle_boundary_resets_consumption_and_thresholds_and_reenables_the_key() {
    let (_dir, store, keys, tenant) = open().await;
    let issued = keys
        .create(
            "acme",
            KeySettings {
                name: "daily".into(),
                credit_limit: Some(1_000),
                reset_interval: Some(ResetInterval::Daily),
                ..Default::default()
            },
            Latitude::Any,
        )
        .await
        .unwrap();
    let (id, value) = (issued.key.id.clone(), issued.value.clone());
    let today = now_ms();

    // One charge from 40 % to 100 % fires all three, in order.
    billing::charge(&store, &keys, record(&id, &tenant.id, 400, today, 0))
        .await
        .unwrap();
    let charged = billing::charge(&store, &keys, record(&id, &tenant.id, 600, today, 1))
        .await
        .unwrap();
    let names: Vec<&str> = charged.fired.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        names,
        ["spend.50_percent", "spend.80_percent", "budget.exceeded"]
    );
    assert_eq!(charged.key_remaining, Some(0));
    let refused = keys.authenticate(&value, today).unwrap_err();
    assert_eq!(refused.code(), Code::BudgetExceeded);

    // After the boundary, with no request in between, the key reads active
    // and empty.
    let tomorrow = today + DAY;
    let key = keys
        .authenticate(&value, tomorrow)
        .expect("active again after the reset");
    assert_eq!(key.state(tomorrow), KeyState::Active);
    assert_eq!(key.current_cycle(tomorrow), (0, &[][..]));

    // The next cycle fires its events again, once.
    let charged = billing::charge(&store, &keys, record(&id, &tenant.id, 500, tomorrow, 2))
        .await
        .unwrap();
    assert_eq!(charged.fired.len(), 1);
    assert_eq!(charged.fired[0].event.as_str(), "spend.50_percent");
    let stored = keys.get(&id).unwrap();
    assert_eq!(stored.credits_consumed, 500);
    assert_eq!(stored.notified_thresholds, [50]);
    let charged = billing::charge(&store, &keys, record(&id, &tenant.id, 10, tomorrow, 3))
        .await
        .unwrap();
    assert!(charged.fired.is_empty(), "50 % already notified this cycle");
    assert_eq!(
        fired(&store, today - DAY, tomorrow + DAY),
        [
            "spend.50_percent",
            "spend.80_percent",
            "budget.exceeded",
            "spend.50_percent"
        ]
    );
    // The wallet paid for every charge (enterprise: it may go negative).
    let tenant = store.read(|tx| tenants::resolve(tx, "acme")).unwrap();
    assert_eq!(tenant.wallet, -1_510);
}

#[tokio::test]
async fn a_rotated_pair_spends_one_allowance() {
    let (_dir, store, keys, tenant) = open().await;
    let old = keys
        .create(
            "acme",
            KeySettings {
                name: "ci".into(),
                credit_limit: Some(1_000),
                ..Default::default()
            },
            Latitude::Any,
        )
        .await
        .unwrap();
    let now = now_ms();
    billing::charge(&store, &keys, record(&old.key.id, &tenant.id, 300, now, 0))
        .await
        .unwrap();
    let new = keys.rotate(&old.key.id).await.unwrap();
    assert_eq!(
        new.key.credits_consumed, 300,
        "rotation keeps the consumption"
    );
    // Spending on either key counts for both: 300 + 400 + 300 = the cap.
    billing::charge(&store, &keys, record(&new.key.id, &tenant.id, 400, now, 1))
        .await
        .unwrap();
    let last = billing::charge(&store, &keys, record(&old.key.id, &tenant.id, 300, now, 2))
        .await
        .unwrap();
    assert_eq!(last.key_remaining, Some(0));
    for value in [&old.value, &new.value] {
        assert_eq!(
            keys.authenticate(value, now).unwrap_err().code(),
            Code::BudgetExceeded
        );
    }
    // Each threshold fired once for the pair.
    assert_eq!(
        fired(&store, now - DAY, now + DAY),
        ["spend.50_percent", "spend.80_percent", "budget.exceeded"]
    );
}
