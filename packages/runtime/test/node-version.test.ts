import { exitOnOldNode, nodeVersionProblem, NODE_MAJOR } from '../src/index.js';

describe('the Node a service runs on', () => {
  it('24 or later passes, this run included', () => {
    expect(NODE_MAJOR).toBe(24);
    for (const version of ['24.0.0', '24.21.0', '26.12.1', process.versions.node]) {
      expect(nodeVersionProblem(version)).toBeUndefined();
    }
  });

  it('an older one: one line naming both versions, the usual ways and the Node 24 of pnpm install', () => {
    expect(nodeVersionProblem('20.20.2')).toBe(
      'Node 24 or later is needed (this is 20.20.2): install it your usual way (nvm, fnm, volta, ' +
        'brew or nodejs.org), or in the repository run it through pnpm (pnpm exec node ' +
        '<service>/dist/index.js): pnpm install puts Node 24 into node_modules/.bin on Linux x64',
    );
    expect(nodeVersionProblem('22.22.2')).toMatch(/^Node 24 .*\(this is 22\.22\.2\)/);
  });

  it('exitOnOldNode: the line on stderr, as `Cannot start:`, and exit 1; nothing on Node 24', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      exitOnOldNode('24.21.0');
      expect(exit).not.toHaveBeenCalled();
      expect(write).not.toHaveBeenCalled();
      exitOnOldNode('20.20.2');
      expect(exit).toHaveBeenCalledWith(1);
      expect(write).toHaveBeenCalledTimes(1);
      expect(String(write.mock.calls[0][0])).toMatch(
        /^Cannot start: Node 24 or later is needed \(this is 20\.20\.2\): [^\n]*\n$/,
      );
    } finally {
      exit.mockRestore();
      write.mockRestore();
    }
  });
});
