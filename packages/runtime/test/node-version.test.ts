import path from 'node:path';
import { exitOnOldNode, nodeVersionProblem, NODE_MAJOR } from '../src';

describe('the Node a service runs on', () => {
  const entry = path.join(process.cwd(), 'services', 'api-a', 'dist', 'index.js');

  it('24 or later passes, this Jest run included', () => {
    expect(NODE_MAJOR).toBe(24);
    for (const version of ['24.0.0', '24.21.0', '26.12.1', process.versions.node]) {
      expect(nodeVersionProblem(version, entry, 'linux-x64')).toBeUndefined();
    }
  });

  it('an older one: one line naming both versions and the usual ways to install Node 24', () => {
    const line = nodeVersionProblem('20.20.2', entry, 'darwin-arm64');
    expect(line).toBe(
      'Node 24 or later is needed (this is 20.20.2): install it your usual way (nvm install 24, ' +
        'fnm install 24, volta install node@24, brew install node@24 or nodejs.org)',
    );
    expect(nodeVersionProblem('22.22.2', entry, 'linux-arm64')).toMatch(/^Node 24 .*\(this is 22/);
  });

  it('on Linux x64 also how to run the service on the Node 24 that pnpm install brings', () => {
    expect(nodeVersionProblem('20.20.2', entry, 'linux-x64')).toMatch(
      /nodejs\.org\), or in the repository run it through pnpm \(pnpm exec node services\/api-a\/dist\/index\.js\): pnpm install puts Node 24 into node_modules\/\.bin$/,
    );
  });

  it('exitOnOldNode: the line on stderr, as `Cannot start:`, and exit 1; nothing on Node 24', () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
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
