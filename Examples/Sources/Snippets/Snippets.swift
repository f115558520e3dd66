/// The README's and the DocC articles' Swift code blocks, each inside a function of its own so
/// that it compiles as written (the functions are never called). The test
/// `DocumentationSnippetTests` in the root package checks that every block appears here.
enum Snippets {}
