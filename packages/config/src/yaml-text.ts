import { parseDocument, type Document, type ScalarTag, type Tags } from 'yaml';

/**
 * YAML's core schema reads `0012345` as 12345 and `98765432109876543210` as a float that lost
 * digits: a secret written unquoted would silently change. An integer stays a number only when
 * it prints back as the same text.
 */
const losslessIntegers = (tags: Tags): Tags =>
  tags.map((tag) => {
    if (typeof tag !== 'object' || tag.tag !== 'tag:yaml.org,2002:int' || tag.format) return tag;
    const scalar = tag as ScalarTag;
    const resolve = scalar.resolve.bind(scalar);
    const lossless: ScalarTag = {
      ...scalar,
      resolve: (text, onError, options) => {
        const value: unknown = resolve(text, onError, options);
        return typeof value === 'number' && String(value) === text ? value : text;
      },
    };
    return lossless;
  });

export function parseYamlDocument(text: string): Document {
  return parseDocument(text, { customTags: losslessIntegers });
}

export function parseYamlValue(text: string): unknown {
  const doc = parseYamlDocument(text);
  return doc.errors.length > 0 ? text : (doc.toJS() as unknown);
}
