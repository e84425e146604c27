// A minimal client: start `planlint server` over stdio for YAML files; the server decides which are plans.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

exports.activate = function activate() {
  const settings = vscode.workspace.getConfiguration("planlint");
  client = new LanguageClient(
    "planlint",
    "planlint",
    { command: settings.get("path"), args: ["server"] },
    {
      documentSelector: [{ scheme: "file", language: "yaml" }],
      initializationOptions: { dataChecksOnSave: settings.get("dataChecksOnSave") },
    },
  );
  return client.start();
};

exports.deactivate = function deactivate() {
  return client ? client.stop() : undefined;
};
