import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { docker } from './docker.js';

// The images a build made, as `docker save` writes them: their configs and layers, for the
// container test's checks of what an image holds.

export interface SavedLayer {
  /** The layer's diff id (sha256 of its tar), as `docker image inspect` lists it in RootFS. */
  diffId: string;
  /** The layer's tar inside the saved folder. */
  tar: string;
  /** Uncompressed size in bytes. */
  size: number;
}

export interface SavedImage {
  names: string[];
  /** The image config as saved (environment, command, history...), raw JSON. */
  configText: string;
  layers: SavedLayer[];
}

/**
 * `docker save` of the images, unpacked into `dir`: each image's config and layers, in order
 * (an image saved under several names is one entry).
 */
export async function saveImages(names: string[], dir: string): Promise<SavedImage[]> {
  const file = path.join(dir, 'images.tar');
  await docker(['save', '-o', file, ...names], { timeoutMs: 10 * 60_000 });
  execFileSync('tar', ['-xf', file, '-C', dir]);
  fs.rmSync(file);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
    Config: string;
    RepoTags: string[] | null;
    Layers: string[];
  }[];
  return manifest.map((m) => {
    const configText = fs.readFileSync(path.join(dir, m.Config), 'utf8');
    const diffIds = (JSON.parse(configText) as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids;
    return {
      names: m.RepoTags ?? [],
      configText,
      layers: m.Layers.map((l, i) => ({
        diffId: diffIds[i],
        tar: path.join(dir, l),
        size: fs.statSync(path.join(dir, l)).size,
      })),
    };
  });
}

/** The diff ids of an image's layers (`docker image inspect`). */
export async function layerIds(image: string): Promise<string[]> {
  const [info] = JSON.parse(await docker(['image', 'inspect', image])) as {
    RootFS: { Layers: string[] };
  }[];
  return info.RootFS.Layers;
}
