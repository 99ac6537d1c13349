//! Dashboard accounts, their roles, and the one permission table.
//!
//! Permissions attach to the account's role, never to a key (spec,
//! "Account roles"). [`Role::can`] is the whole table: a `match` over every
//! (role, permission) pair, so adding either makes the compiler ask.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::ids::new_id;
use crate::base::ids::random_token;
use crate::base::time::{format_rfc3339, now_ms};
use crate::store::tables::{self, ACCOUNT_EMAILS, ACCOUNTS};
use crate::store::{Reader, Store, StoreError, Table};
use crate::tenants;

pub const ACCOUNT_TABLE: Table<Account> = Table::new(ACCOUNTS);

/// Passwords shorter than this are refused.
pub const MIN_PASSWORD_LEN: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Owner,
    Admin,
    Billing,
    Auditor,
    Reviewer,
    User,
    Tester,
}

impl Role {
    pub const ALL: [Role; 7] = [
        Role::Owner,
        Role::Admin,
        Role::Billing,
        Role::Auditor,
        Role::Reviewer,
        Role::User,
        Role::Tester,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Billing => "billing",
            Role::Auditor => "auditor",
            Role::Reviewer => "reviewer",
            Role::User => "user",
            Role::Tester => "tester",
        }
    }

    /// The permission table.
    pub fn can(self, permission: Permission) -> bool {
        use Permission as P;
        use Role as R;
        match permission {
            // Only the owner: ownership, hard deletes, erasure.
            P::AssignOwner | P::HardDeleteModels | P::EraseSubjects => self == R::Owner,
            P::ManageRegistry | P::ManageTenants | P::ManageModelAccess => {
                matches!(self, R::Owner | R::Admin)
            }
            P::ManageModels
            | P::ManageUsers
            | P::ManagePolicies
            | P::ManageAllKeys
            | P::ManageWebhooks => {
                matches!(self, R::Owner | R::Admin)
            }
            P::ManageIncidents | P::ManageConsents => matches!(self, R::Owner | R::Admin),
            P::TopUpCredits => matches!(self, R::Owner | R::Admin | R::Billing),
            P::ManagePaymentMethods => matches!(self, R::Owner | R::Billing),
            P::ViewBilling => matches!(self, R::Owner | R::Admin | R::Billing),
            P::ViewAllUsage => matches!(self, R::Owner | R::Admin | R::Billing | R::Auditor),
            P::ViewConversations | P::ViewAudit => matches!(self, R::Owner | R::Auditor),
            P::ReviewItems => matches!(self, R::Owner | R::Reviewer),
            P::ViewIncidents => matches!(self, R::Owner | R::Admin | R::Auditor),
            P::ManageOwnKeys | P::ViewOwnUsage => matches!(self, R::Owner | R::Admin | R::User),
            P::SendInference => matches!(self, R::Owner | R::Admin | R::User | R::Tester),
            P::UsePlayground => matches!(self, R::Owner | R::Tester),
            P::ViewModels => true,
        }
    }

    pub fn permissions(self) -> Vec<&'static str> {
        Permission::ALL
            .iter()
            .filter(|p| self.can(**p))
            .map(|p| p.as_str())
            .collect()
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a role; use one of owner, admin, billing, auditor, reviewer, user, tester"))
    }
}

/// Declares every permission once: its variant of [`Permission`], its
/// name, its place in [`Permission::ALL`] and its marker type in [`perm`]
/// (what a handler names in its signature).
macro_rules! permissions {
    ($($name:ident => $text:literal,)*) => {
        /// What a dashboard account may do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Permission {
            $($name,)*
        }

        impl Permission {
            pub const ALL: [Permission; [$(Permission::$name,)*].len()] = [$(Permission::$name,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Permission::$name => $text,)*
                }
            }
        }

        /// Marker types, one per permission.
        pub mod perm {
            use super::{Permission, PermissionMarker};
            $(
                pub struct $name;
                impl PermissionMarker for $name {
                    const PERMISSION: Permission = Permission::$name;
                }
            )*
        }
    };
}

permissions! {
    ManageModels => "models.manage",
    HardDeleteModels => "models.hard_delete",
    ManageUsers => "users.manage",
    AssignOwner => "users.assign_owner",
    ManagePolicies => "policies.manage",
    TopUpCredits => "credits.top_up",
    ManagePaymentMethods => "billing.payment_methods",
    ViewBilling => "billing.view",
    ViewAllUsage => "usage.view_all",
    ViewConversations => "conversations.view",
    ViewAudit => "audit.view",
    ReviewItems => "reviews.decide",
    ManageAllKeys => "keys.manage_all",
    ManageOwnKeys => "keys.manage_own",
    ViewOwnUsage => "usage.view_own",
    SendInference => "inference.send",
    UsePlayground => "playground.use",
    ManageWebhooks => "webhooks.manage",
    ManageRegistry => "registry.manage",
    ManageIncidents => "incidents.manage",
    ViewIncidents => "incidents.view",
    ManageConsents => "consents.manage",
    EraseSubjects => "subjects.erase",
    ViewModels => "models.view",
    ManageTenants => "tenants.manage",
    ManageModelAccess => "models.access",
}

/// A permission as a type, so a handler can require it in its signature.
pub trait PermissionMarker: Send + Sync + 'static {
    const PERMISSION: Permission;
}

impl Permission {
    /// Permissions over what every tenant shares (the global catalogue, the
    /// sub-processor registry, the tenants themselves): held only by the
    /// operator tenant's accounts, whatever their role's table says.
    pub fn operator_only(self) -> bool {
        matches!(
            self,
            Permission::ManageModels
                | Permission::HardDeleteModels
                | Permission::ManageRegistry
                | Permission::ManageTenants
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub id: String,
    pub email: String,
    pub tenant_id: String,
    pub role: Role,
    /// argon2id, PHC string.
    pub password_hash: String,
    pub disabled: bool,
    pub created_at: i64,
}

impl Account {
    pub fn view(&self) -> Value {
        json!({
            "id": self.id,
            "email": self.email,
            "tenantId": self.tenant_id,
            "role": self.role.as_str(),
            "disabled": self.disabled,
            "createdAt": format_rfc3339(self.created_at),
        })
    }
}

/// Lower-cases and checks an email address (a light check: one `@`, a dot
/// or `localhost` after it, no spaces).
pub fn normalize_email(email: &str) -> Result<String, String> {
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
        && !email
            .chars()
            .any(|c| c.is_whitespace() || crate::base::names::is_hidden(c))
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.contains('@')
                && (domain.contains('.') || domain == "localhost")
        });
    if valid {
        Ok(email)
    } else {
        Err(format!("`{email}` is not an email address"))
    }
}

pub fn hash_password(password: &str) -> Result<String, StoreError> {
    use argon2::password_hash::PasswordHasher;
    if password.chars().count() < MIN_PASSWORD_LEN {
        return Err(StoreError::Invalid(format!(
            "a password needs at least {MIN_PASSWORD_LEN} characters"
        )));
    }
    argon2::Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| StoreError::Database(format!("hashing a password: {e}")))
}

pub fn verify_password(password: &str, hash: &str) -> bool {
    use argon2::password_hash::PasswordVerifier;
    use argon2::password_hash::phc::PasswordHash;
    match PasswordHash::new(hash) {
        Ok(parsed) => argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A password for a new account when none was given: 18 random bytes.
pub fn generate_password() -> String {
    random_token(18)
}

/// Inserts an account inside a write transaction, refusing a taken email.
pub fn insert(txn: &redb::WriteTransaction, account: &Account) -> Result<(), StoreError> {
    if tables::index_get(txn, ACCOUNT_EMAILS, account.email.as_bytes())?.is_some() {
        return Err(StoreError::Conflict(format!(
            "an account `{}` already exists",
            account.email
        )));
    }
    ACCOUNT_TABLE.put(txn, account.id.as_bytes(), account)?;
    tables::index_put(txn, ACCOUNT_EMAILS, account.email.as_bytes(), &account.id)
}

/// An account by email or by id.
pub fn find(tx: &impl Reader, who: &str) -> Result<Account, StoreError> {
    if let Some(account) = find_by_email(tx, who)? {
        return Ok(account);
    }
    ACCOUNT_TABLE
        .get(tx, who.as_bytes())?
        .ok_or_else(|| StoreError::NotFound(format!("no account `{who}`")))
}

pub fn find_by_email(tx: &impl Reader, email: &str) -> Result<Option<Account>, StoreError> {
    let email = email.trim().to_lowercase();
    match tables::index_get(tx, ACCOUNT_EMAILS, email.as_bytes())? {
        Some(id) => ACCOUNT_TABLE.get(tx, id.as_bytes()),
        None => Ok(None),
    }
}

/// Creates an account. The password is hashed before the write (argon2 is
/// slow on purpose and must not hold the writer).
pub async fn create(
    store: &Store,
    email: &str,
    tenant: &str,
    role: Role,
    password: &str,
) -> Result<Account, StoreError> {
    let email = normalize_email(email).map_err(StoreError::Invalid)?;
    let password = password.to_owned();
    let password_hash = tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|e| StoreError::Database(e.to_string()))??;
    let tenant = tenant.to_owned();
    store
        .write(move |txn| {
            let tenant = tenants::resolve(txn, &tenant)?;
            let account = Account {
                id: new_id("acc"),
                email: email.clone(),
                tenant_id: tenant.id,
                role,
                password_hash: password_hash.clone(),
                disabled: false,
                created_at: now_ms(),
            };
            insert(txn, &account)?;
            Ok(account)
        })
        .await
}

pub fn list(store: &Store, tenant: Option<&str>) -> Result<Vec<Account>, StoreError> {
    store.read(|tx| {
        let mut accounts = tenants::rows_of(tx, &ACCOUNT_TABLE, tenant, |a| &a.tenant_id)?;
        accounts.sort_by(|a, b| a.email.cmp(&b.email));
        Ok(accounts)
    })
}

/// Changes an account (by email or id) in one transaction; a disabled
/// account also loses its sessions at once. A change that would leave its
/// tenant without an enabled owner is refused: nobody could then manage
/// the tenant from the dashboard.
pub async fn modify(
    store: &Store,
    who: &str,
    change: impl Fn(&mut Account) -> Result<(), StoreError> + Send + 'static,
) -> Result<Account, StoreError> {
    let who = who.to_owned();
    store
        .write(move |txn| {
            let before = find(txn, &who)?;
            let mut account = before.clone();
            change(&mut account)?;
            let was_owner = before.role == Role::Owner && !before.disabled;
            let is_owner = account.role == Role::Owner && !account.disabled;
            if was_owner && !is_owner {
                let other_owner = ACCOUNT_TABLE.all(txn)?.into_iter().any(|a| {
                    a.id != account.id && a.tenant_id == account.tenant_id && a.role == Role::Owner && !a.disabled
                });
                if !other_owner {
                    return Err(StoreError::Conflict(format!(
                        "{} is the last enabled owner of its tenant; make another account owner first",
                        account.email
                    )));
                }
            }
            ACCOUNT_TABLE.put(txn, account.id.as_bytes(), &account)?;
            if account.disabled {
                super::sessions::remove_all_of(txn, &account.id)?;
            }
            Ok(account)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use Permission as P;

    /// The spec's role table, written out independently of `Role::can`.
    fn expected(role: Role) -> Vec<Permission> {
        match role {
            Role::Owner => Permission::ALL.to_vec(),
            Role::Admin => vec![
                P::ManageModels,
                P::ManageUsers,
                P::ManagePolicies,
                P::TopUpCredits,
                P::ViewBilling,
                P::ViewAllUsage,
                P::ManageAllKeys,
                P::ManageOwnKeys,
                P::ViewOwnUsage,
                P::SendInference,
                P::ManageWebhooks,
                P::ManageIncidents,
                P::ViewIncidents,
                P::ManageConsents,
                P::ViewModels,
                P::ManageRegistry,
                P::ManageTenants,
                P::ManageModelAccess,
            ],
            Role::Billing => vec![
                P::TopUpCredits,
                P::ManagePaymentMethods,
                P::ViewBilling,
                P::ViewAllUsage,
                P::ViewModels,
            ],
            Role::Auditor => vec![
                P::ViewAllUsage,
                P::ViewConversations,
                P::ViewAudit,
                P::ViewIncidents,
                P::ViewModels,
            ],
            Role::Reviewer => vec![P::ReviewItems, P::ViewModels],
            Role::User => vec![
                P::ManageOwnKeys,
                P::ViewOwnUsage,
                P::SendInference,
                P::ViewModels,
            ],
            Role::Tester => vec![P::SendInference, P::UsePlayground, P::ViewModels],
        }
    }

    #[test]
    fn role_permission_table_matches_the_spec() {
        for role in Role::ALL {
            let allowed = expected(role);
            for permission in Permission::ALL {
                assert_eq!(
                    role.can(permission),
                    allowed.contains(&permission),
                    "{} / {}",
                    role.as_str(),
                    permission.as_str()
                );
            }
        }
    }

    #[test]
    fn admin_cannot_transfer_ownership_or_hard_delete() {
        assert!(!Role::Admin.can(P::AssignOwner));
        assert!(!Role::Admin.can(P::HardDeleteModels));
        assert!(Role::Owner.can(P::AssignOwner));
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let hash = hash_password("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse battery", &hash));
        assert!(!verify_password("correct horse batterx", &hash));
        assert!(!verify_password("x", "not a hash"));
        assert!(matches!(
            hash_password("short"),
            Err(StoreError::Invalid(_))
        ));
    }

    #[test]
    fn emails_are_normalized() {
        assert_eq!(
            normalize_email(" Ada@Example.COM ").unwrap(),
            "ada@example.com"
        );
        assert_eq!(
            normalize_email("owner@localhost").unwrap(),
            "owner@localhost"
        );
        for bad in ["", "ada", "@x.io", "a@b", "a b@x.io", "a@b@c.io"] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn roles_parse_from_their_names() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>().unwrap(), role);
        }
        assert!("root".parse::<Role>().is_err());
    }
}
