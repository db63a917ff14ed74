-- Drives the ShardLens server from Neovim 0.7 (vim.lsp.start_client) and writes what the server answered as JSON.
-- Arguments come from environment variables: SHARDLENS_SERVER (dist/server.js), SHARDLENS_OUT (result file),
-- SHARDLENS_HOVER_LINE / SHARDLENS_HOVER_COL (zero-based position of a key to hover).
local out = {}
local server = os.getenv('SHARDLENS_SERVER')
local root = vim.fn.getcwd()
local id = vim.lsp.start_client({ name = 'shardlens', cmd = { 'node', server, '--stdio' }, root_dir = root })
out.started = id ~= nil
if id then
  vim.lsp.buf_attach_client(0, id)
  out.got_diagnostics = vim.wait(10000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.diagnostics, { lnum = d.lnum, col = d.col, message = d.message, severity = d.severity, code = d.code })
  end
  local uri = vim.uri_from_bufnr(0)
  local pos = { line = tonumber(os.getenv('SHARDLENS_HOVER_LINE')), character = tonumber(os.getenv('SHARDLENS_HOVER_COL')) }
  local hover = vim.lsp.buf_request_sync(0, 'textDocument/hover', { textDocument = { uri = uri }, position = pos }, 10000)
  out.hover = hover and hover[id] and hover[id].result or vim.NIL
  local hints = vim.lsp.buf_request_sync(0, 'textDocument/inlayHint', {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 10000, character = 0 } },
  }, 10000)
  out.hints = hints and hints[id] and hints[id].result or vim.NIL
  local lenses = vim.lsp.buf_request_sync(0, 'textDocument/codeLens', { textDocument = { uri = uri } }, 10000)
  out.lenses = lenses and lenses[id] and lenses[id].result or vim.NIL
  vim.lsp.stop_client(id)
end
local f = io.open(os.getenv('SHARDLENS_OUT'), 'w')
f:write(vim.fn.json_encode(out))
f:close()
vim.cmd('qa!')
