//! The four message roles, shared by estimation and pruning.

/// Who wrote a message. The discriminants are the codes the binding passes in arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Role {
    System = 0,
    User = 1,
    Assistant = 2,
    Tool = 3,
}

impl Role {
    /// The lowercase name used on the wire (`"system"`, `"user"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Parses a lowercase role name; `None` for anything else.
    pub fn from_name(name: &str) -> Option<Role> {
        match name {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }

    /// The role for an array code (see the discriminants); `None` for an unknown code.
    pub fn from_code(code: u8) -> Option<Role> {
        match code {
            0 => Some(Role::System),
            1 => Some(Role::User),
            2 => Some(Role::Assistant),
            3 => Some(Role::Tool),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
            assert_eq!(Role::from_name(role.as_str()), Some(role));
            assert_eq!(Role::from_code(role as u8), Some(role));
        }
        assert_eq!(Role::from_name("System"), None);
        assert_eq!(Role::from_code(4), None);
    }
}
