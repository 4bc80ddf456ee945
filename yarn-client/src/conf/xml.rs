//! Reading one Hadoop configuration resource (`core-site.xml`, `yarn-site.xml`...).
//!
//! The format is `<configuration>` holding `<property>` elements with `<name>`, `<value>`
//! and optional `<final>true</final>` children (Hadoop 3 also accepts them as attributes
//! of `<property>`); `<description>`, `<source>` and `<tag>` are ignored. Names are
//! trimmed, values are kept verbatim (Hadoop trims only in typed getters). Properties
//! without a name or without a value are skipped, as Hadoop does. `xi:include` is not
//! supported and is skipped with a warning.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use tracing::warn;

use super::error::ConfError;

/// One `<property>` of a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub name: String,
    pub value: String,
    pub is_final: bool,
}

/// Which child of `<property>` text is being collected into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Name,
    Value,
    Final,
    Ignored,
}

#[derive(Debug, Default)]
struct PropertyBuilder {
    name: Option<String>,
    value: Option<String>,
    is_final: bool,
    final_text: String,
    field: Option<Field>,
}

impl PropertyBuilder {
    fn from_attributes(
        e: &BytesStart<'_>,
        malformed: impl Fn(String) -> ConfError,
    ) -> Result<Self, ConfError> {
        let mut b = Self::default();
        for attr in e.attributes() {
            let attr = attr.map_err(|err| malformed(err.to_string()))?;
            let value = attr
                .unescape_value()
                .map_err(|err| malformed(err.to_string()))?
                .into_owned();
            match attr.key.local_name().as_ref() {
                b"name" => b.name = Some(value.trim().to_string()),
                b"value" => b.value = Some(value),
                b"final" => b.is_final = value.trim() == "true",
                _ => {}
            }
        }
        Ok(b)
    }

    fn push_text(&mut self, text: &str) {
        match self.field {
            Some(Field::Name) => self.name.get_or_insert_with(String::new).push_str(text),
            Some(Field::Value) => self.value.get_or_insert_with(String::new).push_str(text),
            Some(Field::Final) => self.final_text.push_str(text),
            Some(Field::Ignored) | None => {}
        }
    }

    fn finish(self, resource: &str) -> Option<Property> {
        let is_final = self.is_final || self.final_text.trim() == "true";
        let name = self.name.map(|n| n.trim().to_string()).unwrap_or_default();
        if name.is_empty() {
            warn!(resource, "skipping <property> without a name");
            return None;
        }
        let Some(value) = self.value else {
            warn!(resource, name, "skipping <property> without a value");
            return None;
        };
        Some(Property {
            name,
            value,
            is_final,
        })
    }
}

/// Parse one resource. `resource` names it in errors and logs (usually the file path).
pub fn parse(xml: &str, resource: &str) -> Result<Vec<Property>, ConfError> {
    let mut reader = Reader::from_str(xml);
    let malformed = |position: u64, message: String| ConfError::Malformed {
        resource: resource.to_string(),
        position,
        message,
    };
    let mut props = Vec::new();
    // Element names from the root down; the root must be <configuration>.
    let mut stack: Vec<Vec<u8>> = Vec::new();
    let mut current: Option<PropertyBuilder> = None;
    let mut seen_root = false;

    loop {
        let event = reader
            .read_event()
            .map_err(|e| malformed(reader.error_position(), e.to_string()))?;
        let pos = reader.buffer_position();
        let here = |m: String| malformed(pos, m);
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let is_empty = matches!(event, Event::Empty(_));
                let name = e.local_name().as_ref().to_vec();
                if stack.is_empty() {
                    if seen_root {
                        return Err(here("more than one top-level element".into()));
                    }
                    if name != b"configuration" {
                        return Err(here(format!(
                            "top-level element is <{}>, not <configuration>",
                            String::from_utf8_lossy(&name)
                        )));
                    }
                    seen_root = true;
                } else {
                    open_element(e, &name, &stack, &mut current, resource, &here)?;
                }
                if is_empty {
                    close_element(&name, &mut current, &mut props, resource);
                } else {
                    stack.push(name);
                }
            }
            Event::End(e) => {
                // quick-xml checks that end tags match start tags.
                let name = e.local_name().as_ref().to_vec();
                stack.pop();
                close_element(&name, &mut current, &mut props, resource);
            }
            Event::Text(t) => {
                let text = t.unescape().map_err(|e| here(e.to_string()))?;
                if stack.is_empty() {
                    if !text.trim().is_empty() {
                        return Err(here("text outside <configuration>".into()));
                    }
                } else if let Some(b) = current.as_mut() {
                    b.push_text(&text);
                }
            }
            Event::CData(t) => {
                let text = t.decode().map_err(|e| here(e.to_string()))?;
                if let Some(b) = current.as_mut() {
                    b.push_text(&text);
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !seen_root {
        return Err(malformed(
            reader.buffer_position(),
            "no <configuration> element".into(),
        ));
    }
    if !stack.is_empty() {
        return Err(malformed(
            reader.buffer_position(),
            "document ends inside an element".into(),
        ));
    }
    Ok(props)
}

fn open_element(
    e: &BytesStart<'_>,
    name: &[u8],
    stack: &[Vec<u8>],
    current: &mut Option<PropertyBuilder>,
    resource: &str,
    here: &impl Fn(String) -> ConfError,
) -> Result<(), ConfError> {
    let parent = stack.last().map(Vec::as_slice);
    match (parent, name) {
        // Hadoop allows <configuration> nested in <configuration>; its properties count.
        (Some(b"configuration"), b"configuration") => {}
        (Some(b"configuration"), b"property") => {
            *current = Some(PropertyBuilder::from_attributes(e, here)?);
        }
        (Some(b"configuration"), b"include") => {
            warn!(
                resource,
                "xi:include is not supported; included resource ignored"
            );
        }
        (Some(b"property"), field) => {
            if let Some(b) = current.as_mut() {
                b.field = Some(match field {
                    b"name" => Field::Name,
                    b"value" => {
                        // <value/> and <value></value> set the empty string.
                        b.value.get_or_insert_with(String::new);
                        Field::Value
                    }
                    b"final" => Field::Final,
                    _ => Field::Ignored,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

fn close_element(
    name: &[u8],
    current: &mut Option<PropertyBuilder>,
    props: &mut Vec<Property>,
    resource: &str,
) {
    match name {
        b"property" => {
            if let Some(p) = current.take().and_then(|b| b.finish(resource)) {
                props.push(p);
            }
        }
        _ => {
            if let Some(b) = current.as_mut() {
                b.field = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, value: &str, is_final: bool) -> Property {
        Property {
            name: name.into(),
            value: value.into(),
            is_final,
        }
    }

    #[test]
    fn reads_properties_with_final_and_ignores_extras() {
        let xml = r#"<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- a comment -->
<configuration>
  <property>
    <name> yarn.resourcemanager.hostname </name>
    <value>rm.example.com</value>
    <description>where the RM runs</description>
    <final>true</final>
  </property>
  <property><name>a</name><value> spaced &amp; escaped </value><source>x</source></property>
  <property><name>empty</name><value/></property>
  <property><name>cdata</name><value><![CDATA[<raw>]]></value></property>
  <property name="attr" value="v" final="true"/>
</configuration>"#;
        assert_eq!(
            parse(xml, "t.xml").unwrap(),
            vec![
                one("yarn.resourcemanager.hostname", "rm.example.com", true),
                one("a", " spaced & escaped ", false),
                one("empty", "", false),
                one("cdata", "<raw>", false),
                one("attr", "v", true),
            ]
        );
    }

    #[test]
    fn skips_properties_without_name_or_value() {
        let xml = "<configuration><property><value>v</value></property>\
                   <property><name>n</name></property></configuration>";
        assert!(parse(xml, "t.xml").unwrap().is_empty());
    }

    #[test]
    fn nested_configuration_counts() {
        let xml = "<configuration><configuration><property><name>n</name><value>v</value>\
                   </property></configuration></configuration>";
        assert_eq!(parse(xml, "t.xml").unwrap(), vec![one("n", "v", false)]);
    }

    fn malformed(xml: &str) -> String {
        match parse(xml, "bad.xml") {
            Err(e @ ConfError::Malformed { .. }) => e.to_string(),
            other => panic!("expected Malformed for {xml:?}, got {other:?}"),
        }
    }

    #[test]
    fn malformed_documents_are_typed_errors_naming_the_resource() {
        for xml in [
            "",
            "   ",
            "<configuration>",
            "<configuration><property></configuration>",
            "<configuration><property><name>a</name><value>&bogus;</value></property></configuration>",
            "<notconfiguration/>",
            "<configuration/><configuration/>",
            "text<configuration/>",
            "<configuration><property name=noquotes/></configuration>",
        ] {
            assert!(malformed(xml).contains("bad.xml"), "{xml:?}");
        }
        assert!(malformed("<html/>").contains("not <configuration>"));
    }
}
