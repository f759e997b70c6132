//! The topics of a cluster as a DataFusion schema, and `CREATE EXTERNAL TABLE ... STORED AS
//! KAFKA` for tables with options of their own.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, Session, TableProvider, TableProviderFactory};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::CreateExternalTable;

use crate::table::TopicTable;
use crate::values::ValueDecoder;
use crate::{Shared, TableOptions};

/// The topics of the cluster, each a table with the default options, and the tables made by
/// `CREATE EXTERNAL TABLE`.
#[derive(Debug)]
pub(crate) struct TopicSchema {
    pub(crate) shared: Arc<Shared>,
    /// The topics listed by Metadata when the session started.
    pub(crate) topics: Vec<String>,
    pub(crate) created: RwLock<BTreeMap<String, Arc<dyn TableProvider>>>,
}

impl TopicSchema {
    fn created(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<dyn TableProvider>>> {
        self.created.read().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl SchemaProvider for TopicSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.topics.clone();
        names.extend(self.created().keys().cloned());
        names.sort();
        names.dedup();
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = self.created().get(name) {
            return Ok(Some(t.clone()));
        }
        if !self.topics.iter().any(|t| t == name) {
            // A topic made after the session started.
            let found = self
                .shared
                .client
                .metadata(&[name])
                .await
                .map(|t| !t.is_empty())
                .unwrap_or(false);
            if !found {
                return Ok(None);
            }
        }
        let options = self.shared.defaults.clone();
        let table = table(&self.shared, name, options).await?;
        Ok(Some(Arc::new(table)))
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let mut created = self.created.write().unwrap_or_else(|e| e.into_inner());
        Ok(created.insert(name, table))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let mut created = self.created.write().unwrap_or_else(|e| e.into_inner());
        Ok(created.remove(name))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.created().contains_key(name) || self.topics.iter().any(|t| t == name)
    }
}

/// `CREATE EXTERNAL TABLE name STORED AS KAFKA LOCATION 'topic' OPTIONS (...)`.
#[derive(Debug)]
pub(crate) struct KafkaTableFactory {
    pub(crate) shared: Arc<Shared>,
}

#[async_trait]
impl TableProviderFactory for KafkaTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let topic = match cmd.locations.as_slice() {
            [] => cmd.name.table().to_owned(),
            [one] if one.is_empty() => cmd.name.table().to_owned(),
            [one] => one.clone(),
            _ => {
                return Err(DataFusionError::Plan(
                    "a Kafka table reads one topic: LOCATION 'topic'".into(),
                ))
            }
        };
        if !cmd.schema.fields().is_empty() {
            return Err(DataFusionError::Plan(
                "a Kafka table's columns come from the topic: leave out the column list".into(),
            ));
        }
        let mut options = self.shared.defaults.clone();
        let mut keys: Vec<(&String, &String)> = cmd.options.iter().collect();
        keys.sort();
        for (key, value) in keys {
            // DataFusion may qualify keys of unknown formats with `format.`.
            let key = key.strip_prefix("format.").unwrap_or(key);
            options.set(key, value).map_err(DataFusionError::Plan)?;
        }
        Ok(Arc::new(table(&self.shared, &topic, options).await?))
    }
}

/// `topic`'s table with `options`.
pub(crate) async fn table(
    shared: &Arc<Shared>,
    topic: &str,
    options: TableOptions,
) -> Result<TopicTable> {
    let values = match options.format.as_deref() {
        None | Some("bytes") => None,
        Some("avro") => {
            let registry = shared.registry.clone().ok_or_else(|| {
                    DataFusionError::Plan(format!(
                        "table {topic:?} has format avro, which needs a Schema Registry (-r URL, or schema.registry.url)"
                    ))
                })?;
            Some(ValueDecoder::new(registry, topic, options.on_decode_error).await?)
        }
        Some(other) => {
            return Err(DataFusionError::Plan(format!(
                "format {other:?}: expected bytes or avro"
            )))
        }
    };
    Ok(TopicTable::new(
        shared.clone(),
        topic.to_owned(),
        options,
        values,
    ))
}
