//! The baseline policy, applied before the host's guard: arguments a tool's schema marks as
//! paths are resolved (symlinks and `..` included) to canonical absolute paths, and a path
//! outside the project roots or at a well-known credential file (the name rule of
//! `ide_mcp_project_files::credentials`, which the file tools apply too) is a concern that denies the
//! call unless the host's guard explicitly allows it.
//!
//! A schema marks a path with `"x-ide-mcp-path": true` on a top-level property (a string) or
//! on the `items` of an array property (a list of paths).

use std::path::{Component, Path, PathBuf};

use ide_mcp_project_files::credentials;

use serde_json::Value;

/// The schema keyword that marks an argument as a path.
pub const PATH_KEYWORD: &str = "x-ide-mcp-path";

/// The baseline policy of one server set.
#[derive(Clone, Debug, Default)]
pub struct BaselinePolicy {
    roots: Vec<PathBuf>,
}

/// What the baseline found: the arguments with paths made canonical, and every concern.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineOutcome {
    /// The arguments the guard and the handler will see.
    pub arguments: Value,
    /// Why the call should not run unless the host's guard explicitly allows it, with the
    /// paths they are about (for the guard and the model).
    pub concerns: Vec<String>,
    /// The same concerns without the paths (for the audit log).
    pub audit_concerns: Vec<String>,
}

impl BaselinePolicy {
    /// A policy confining paths to `roots` (each made canonical; a root that does not exist
    /// is dropped with a warning).
    pub fn new(roots: &[PathBuf]) -> Self {
        let roots = roots
            .iter()
            .filter_map(|root| match std::fs::canonicalize(root) {
                Ok(canonical) => Some(canonical),
                Err(error) => {
                    tracing::warn!(root = %root.display(), %error, "project root ignored");
                    None
                }
            })
            .collect();
        BaselinePolicy { roots }
    }

    /// Applies the policy to validated `arguments` of a tool whose schema marks `paths`.
    pub fn apply(&self, paths: &PathArguments, mut arguments: Value) -> BaselineOutcome {
        let mut concerns = Concerns::default();
        for marked in &paths.marked {
            let Some(argument) = arguments.get_mut(marked.name.as_str()) else {
                continue;
            };
            match argument {
                Value::String(path) if marked.is_path => {
                    *path = self.resolve(&marked.name, path, &mut concerns);
                }
                Value::Array(items) if marked.items_are_paths => {
                    for item in items.iter_mut() {
                        if let Value::String(path) = item {
                            *path = self.resolve(&marked.name, path, &mut concerns);
                        }
                    }
                }
                _ => {}
            }
        }
        BaselineOutcome {
            arguments,
            concerns: concerns.full,
            audit_concerns: concerns.without_values,
        }
    }

    /// The canonical form of `path`, noting any concern about it.
    fn resolve(&self, argument: &str, path: &str, concerns: &mut Concerns) -> String {
        let given = Path::new(path);
        let absolute = if given.is_absolute() {
            given.to_path_buf()
        } else if let Some(root) = self.roots.first() {
            root.join(given)
        } else {
            concerns.push(
                format!(
                    "`{argument}` is the relative path `{path}`, and there is no project root to \
                     resolve it against"
                ),
                format!("`{argument}` is a relative path and there is no project root"),
            );
            return path.to_owned();
        };
        let canonical = canonicalize_allowing_missing(&absolute);
        if !self.roots.iter().any(|root| canonical.starts_with(root)) {
            concerns.push(
                format!(
                    "`{argument}` resolves to {}, which is outside the project",
                    canonical.display()
                ),
                format!("`{argument}` is outside the project"),
            );
        }
        if let Some(kind) = credentials::kind_by_name(&canonical) {
            concerns.push(
                format!("`{argument}` resolves to {}, {kind}", canonical.display()),
                format!("`{argument}` is {kind}"),
            );
        }
        canonical.to_string_lossy().into_owned()
    }
}

/// Concerns as they are found: each with its path, and without it.
#[derive(Default)]
struct Concerns {
    full: Vec<String>,
    without_values: Vec<String>,
}

impl Concerns {
    fn push(&mut self, full: String, without_values: String) {
        self.full.push(full);
        self.without_values.push(without_values);
    }
}

/// The arguments a tool's schema marks as paths, in the schema's order: read from the schema
/// once, when the tool is registered, so a call looks up only the arguments it must resolve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathArguments {
    marked: Vec<MarkedArgument>,
}

#[derive(Clone, Debug, PartialEq)]
struct MarkedArgument {
    name: String,
    /// The argument is a path (a string).
    is_path: bool,
    /// The argument's items are paths (an array of strings).
    items_are_paths: bool,
}

impl PathArguments {
    /// The top-level properties of `schema` marked with [`PATH_KEYWORD`], or whose `items` are.
    pub fn of(schema: &Value) -> Self {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return PathArguments::default();
        };
        let marked = properties
            .iter()
            .map(|(name, property)| MarkedArgument {
                name: name.clone(),
                is_path: is_marked(property),
                items_are_paths: property.get("items").is_some_and(is_marked),
            })
            .filter(|marked| marked.is_path || marked.items_are_paths)
            .collect();
        PathArguments { marked }
    }
}

fn is_marked(schema: &Value) -> bool {
    schema.get(PATH_KEYWORD).and_then(Value::as_bool) == Some(true)
}

/// Resolves symlinks in the longest existing prefix of `path`, then applies the rest of it
/// lexically: components that do not exist cannot be symlinks, so `..` after them is exact.
fn canonicalize_allowing_missing(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut missing: Vec<Component<'_>> = Vec::new();
    let components: Vec<Component<'_>> = path.components().collect();
    let mut split = components.len();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(&existing) {
            let mut resolved = canonical;
            missing.extend_from_slice(&components[split..]);
            for component in missing {
                match component {
                    Component::Normal(name) => resolved.push(name),
                    Component::ParentDir => {
                        resolved.pop();
                    }
                    Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                }
            }
            return resolved;
        }
        if split == 0 || !existing.pop() {
            return path.to_path_buf();
        }
        split -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", PATH_KEYWORD: true },
                "paths": { "type": "array", "items": { "type": "string", PATH_KEYWORD: true } },
                "pattern": { "type": "string" },
            },
        })
    }

    struct Project {
        _parent: tempfile::TempDir,
        root: PathBuf,
        sibling: PathBuf,
    }

    fn project() -> Project {
        let parent = tempfile::tempdir().expect("tempdir");
        let root = parent.path().join("proj");
        let sibling = parent.path().join("proj-evil");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::fs::create_dir_all(&sibling).expect("mkdir");
        std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
        std::fs::write(sibling.join("loot.txt"), "x").expect("write");
        let root = std::fs::canonicalize(root).expect("canonical");
        let sibling = std::fs::canonicalize(sibling).expect("canonical");
        Project {
            _parent: parent,
            root,
            sibling,
        }
    }

    #[test]
    fn a_relative_path_inside_the_project_is_made_absolute_without_concern() {
        let project = project();
        let policy = BaselinePolicy::new(std::slice::from_ref(&project.root));
        let outcome = policy.apply(
            &PathArguments::of(&schema()),
            json!({ "path": "src/../src/main.rs", "pattern": "../x" }),
        );
        assert!(outcome.concerns.is_empty(), "{:?}", outcome.concerns);
        assert_eq!(
            outcome.arguments["path"],
            json!(project.root.join("src/main.rs").to_string_lossy())
        );
        assert_eq!(outcome.arguments["pattern"], "../x");
    }

    #[test]
    fn dot_dot_out_of_the_project_is_a_concern() {
        let project = project();
        let policy = BaselinePolicy::new(std::slice::from_ref(&project.root));
        let outcome = policy.apply(
            &PathArguments::of(&schema()),
            json!({ "path": "../proj-evil/loot.txt" }),
        );
        assert_eq!(outcome.concerns.len(), 1);
        assert!(outcome.concerns[0].contains("outside the project"));
    }

    #[test]
    fn a_sibling_with_the_root_as_prefix_is_outside() {
        let project = project();
        let policy = BaselinePolicy::new(std::slice::from_ref(&project.root));
        let path = project.sibling.join("loot.txt");
        let outcome = policy.apply(
            &PathArguments::of(&schema()),
            json!({ "paths": [path.to_string_lossy()] }),
        );
        assert_eq!(outcome.concerns.len(), 1, "{:?}", outcome.concerns);
    }

    // Creating a symlink on Windows needs a privilege the test cannot count on.
    #[cfg(unix)]
    #[test]
    fn a_symlink_inside_the_project_pointing_out_is_outside() {
        let project = project();
        std::os::unix::fs::symlink(&project.sibling, project.root.join("link")).expect("symlink");
        let policy = BaselinePolicy::new(std::slice::from_ref(&project.root));
        let outcome = policy.apply(
            &PathArguments::of(&schema()),
            json!({ "path": "link/loot.txt" }),
        );
        assert_eq!(outcome.concerns.len(), 1);
        assert_eq!(
            outcome.arguments["path"],
            json!(project.sibling.join("loot.txt").to_string_lossy())
        );
    }

    #[test]
    fn a_missing_file_under_the_project_is_fine_and_dot_dot_after_it_is_exact() {
        let project = project();
        let policy = BaselinePolicy::new(std::slice::from_ref(&project.root));
        let outcome = policy.apply(
            &PathArguments::of(&schema()),
            json!({ "path": "new/dir/../file.txt" }),
        );
        assert!(outcome.concerns.is_empty());
        assert_eq!(
            outcome.arguments["path"],
            json!(project.root.join("new/file.txt").to_string_lossy())
        );
        let outcome = policy.apply(
            &PathArguments::of(&schema()),
            json!({ "path": "new/../../proj-evil/x" }),
        );
        assert_eq!(outcome.concerns.len(), 1);
    }

    #[test]
    fn credential_files_inside_the_project_are_a_concern() {
        let project = project();
        let policy = BaselinePolicy::new(std::slice::from_ref(&project.root));
        for path in [
            ".env",
            ".env.production",
            "keys/server.pem",
            ".ssh/id_ed25519",
            "deploy/.aws/credentials",
            ".npmrc",
        ] {
            let outcome = policy.apply(&PathArguments::of(&schema()), json!({ "path": path }));
            assert_eq!(outcome.concerns.len(), 1, "{path}: {:?}", outcome.concerns);
        }
        for path in [".env.example", "src/environment.rs", "README.md"] {
            let outcome = policy.apply(&PathArguments::of(&schema()), json!({ "path": path }));
            assert!(
                outcome.concerns.is_empty(),
                "{path}: {:?}",
                outcome.concerns
            );
        }
    }

    #[test]
    fn with_no_roots_every_path_is_a_concern() {
        let policy = BaselinePolicy::new(&[]);
        assert_eq!(
            policy
                .apply(
                    &PathArguments::of(&schema()),
                    json!({ "path": "/etc/hostname" })
                )
                .concerns
                .len(),
            1
        );
        assert_eq!(
            policy
                .apply(&PathArguments::of(&schema()), json!({ "path": "a.txt" }))
                .concerns
                .len(),
            1
        );
    }

    #[test]
    fn the_marked_arguments_are_read_from_the_schema_once_in_its_order() {
        let marked = PathArguments::of(&schema());
        let names: Vec<(&str, bool, bool)> = marked
            .marked
            .iter()
            .map(|marked| (marked.name.as_str(), marked.is_path, marked.items_are_paths))
            .collect();
        assert_eq!(names, [("path", true, false), ("paths", false, true)]);
        // A mark that is not `true`, or one below `items`' level, marks nothing.
        let unmarked = json!({
            "properties": {
                "a": { "type": "string", PATH_KEYWORD: "yes" },
                "b": { "type": "object", "properties": { "c": { PATH_KEYWORD: true } } },
            },
        });
        assert_eq!(PathArguments::of(&unmarked), PathArguments::default());
        assert_eq!(PathArguments::of(&json!(true)), PathArguments::default());
    }
}
