//! The ide-mcp servers, with no JNI.
